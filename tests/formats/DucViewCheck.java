// Checks that files written by annotation.formats open in DUCView the way DUCView 1.4 reads them:
// a validating DOM parser (the inline DTD must hold), the text = the <line> contents joined by
// "\n", Java offsets (UTF-16) with part@label == text.substring(start, end), contributor labels =
// part texts in start order joined by "...", startDocumentRegEx compiled by java.util.regex
// finding one match per reference (the "#n" first line), "(w) label" on every peerscu.
//
// Usage: java DucViewCheck.java FILE...   (prints one line per file; exit status 1 on a failure)

import java.io.File;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import javax.xml.parsers.DocumentBuilder;
import javax.xml.parsers.DocumentBuilderFactory;
import org.w3c.dom.Document;
import org.w3c.dom.Element;
import org.w3c.dom.NodeList;
import org.xml.sax.ErrorHandler;
import org.xml.sax.SAXParseException;

public class DucViewCheck {
    static class Fail extends Exception {
        Fail(String m) { super(m); }
    }

    static String textOf(Element textEl) {
        NodeList lines = textEl.getElementsByTagName("line");
        StringBuilder sb = new StringBuilder();
        for (int i = 0; i < lines.getLength(); i++) {
            if (i > 0) sb.append('\n');
            sb.append(lines.item(i).getTextContent());
        }
        return sb.toString();
    }

    static Element child(Element parent, String tag) throws Fail {
        NodeList l = parent.getElementsByTagName(tag);
        if (l.getLength() == 0) throw new Fail("no <" + tag + ">");
        return (Element) l.item(0);
    }

    // checks every contributor under the elements named scuTag; returns uid -> #contributors
    static Map<String, Integer> checkScus(Element top, String scuTag, String text) throws Fail {
        Map<String, Integer> weights = new HashMap<>();
        NodeList scus = top.getElementsByTagName(scuTag);
        for (int i = 0; i < scus.getLength(); i++) {
            Element scu = (Element) scus.item(i);
            String uid = scu.getAttribute("uid");
            Integer.parseInt(uid);
            NodeList contributors = scu.getElementsByTagName("contributor");
            weights.put(uid, contributors.getLength());
            for (int c = 0; c < contributors.getLength(); c++) {
                Element con = (Element) contributors.item(c);
                NodeList parts = con.getElementsByTagName("part");
                List<int[]> spans = new ArrayList<>();
                for (int p = 0; p < parts.getLength(); p++) {
                    Element part = (Element) parts.item(p);
                    int s = Integer.parseInt(part.getAttribute("start"));
                    int e = Integer.parseInt(part.getAttribute("end"));
                    String got = text.substring(s, e);
                    if (!got.equals(part.getAttribute("label")))
                        throw new Fail(scuTag + " " + uid + ": part label '" + part.getAttribute("label")
                                + "' != text '" + got + "'");
                    spans.add(new int[] {s, e});
                }
                spans.sort((a, b) -> Integer.compare(a[0], b[0]));  // stable
                StringBuilder label = new StringBuilder();
                for (int k = 0; k < spans.size(); k++) {
                    if (k > 0) label.append("...");
                    label.append(text, spans.get(k)[0], spans.get(k)[1]);
                }
                if (!label.toString().equals(con.getAttribute("label")))
                    throw new Fail(scuTag + " " + uid + ": contributor label '" + con.getAttribute("label")
                            + "' != '" + label + "'");
            }
        }
        return weights;
    }

    static String check(File f) throws Exception {
        DocumentBuilderFactory factory = DocumentBuilderFactory.newInstance();
        factory.setValidating(true);
        factory.setIgnoringElementContentWhitespace(true);
        factory.setIgnoringComments(true);
        DocumentBuilder builder = factory.newDocumentBuilder();
        builder.setErrorHandler(new ErrorHandler() {
            public void warning(SAXParseException e) {}
            public void error(SAXParseException e) throws SAXParseException { throw e; }
            public void fatalError(SAXParseException e) throws SAXParseException { throw e; }
        });
        Document doc = builder.parse(f);
        Element root = doc.getDocumentElement();
        Element pyramid = root.getTagName().equals("pyramid") ? root : child(root, "pyramid");
        String text = textOf(child(pyramid, "text"));
        String regex = child(pyramid, "startDocumentRegEx").getTextContent();
        Matcher m = Pattern.compile(regex).matcher(text);
        int docs = 0;
        while (m.find()) docs++;
        Matcher n = Pattern.compile("^#([0-9]+)\n").matcher(text);
        if (!n.find()) throw new Fail("the text does not start with #n");
        if (Integer.parseInt(n.group(1)) != docs)
            throw new Fail("the regex finds " + docs + " documents, the text announces " + n.group(1));
        Map<String, Integer> weights = checkScus(pyramid, "scu", text);
        int peerUnits = 0;
        if (root.getTagName().equals("peerAnnotation")) {
            Element ann = child(root, "annotation");
            String peerText = textOf(child(ann, "text"));
            Map<String, Integer> peer = checkScus(ann, "peerscu", peerText);
            NodeList pscus = ann.getElementsByTagName("peerscu");
            for (int i = 0; i < pscus.getLength(); i++) {
                Element ps = (Element) pscus.item(i);
                String uid = ps.getAttribute("uid");
                String label = ps.getAttribute("label");
                if (uid.equals("0")) continue;
                Integer w = weights.get(uid);
                if (w == null) throw new Fail("peerscu " + uid + " is not in the pyramid");
                if (!label.startsWith("(" + w + ") "))
                    throw new Fail("peerscu " + uid + " label '" + label + "' lacks (" + w + ")");
            }
            if (!peer.keySet().containsAll(weights.keySet()) || !peer.containsKey("0"))
                throw new Fail("a pyramid SCU or uid 0 has no peerscu");
            for (int v : peer.values()) peerUnits += v;
        }
        return "docs=" + docs + " scus=" + weights.size() + " peer_contributors=" + peerUnits;
    }

    public static void main(String[] args) {
        boolean ok = true;
        for (String a : args) {
            try {
                System.out.println("OK " + a + " " + check(new File(a)));
            } catch (Exception e) {
                ok = false;
                System.out.println("FAIL " + a + " " + e);
            }
        }
        System.exit(ok ? 0 : 1);
    }
}
