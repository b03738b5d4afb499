"""The shared text-offset module, run in Debian's Chromium: what the browser selects is what
Python slices, for emoji, combining marks, CJK and right-to-left text."""

import pytest

pytestmark = [pytest.mark.browser, pytest.mark.django_db(transaction=True)]

TEXTS = [
    "Plain ASCII: the dam burst.",
    "Emoji 🎉🇫🇷 party, then 👩‍👩‍👧 family.",
    "Combining: Ame\u0301lie and Zoe\u0308 met.",
    "中文文本，测试分词。然后继续。",
    "עברית: השופט קבע כי.",
    "Mixed 𝒜lpha and العربية text.",
]


@pytest.fixture
def page(chromium, live_server):
    page = chromium.new_page()
    page.goto(f"{live_server.url}/healthz")
    page.evaluate("async () => { window.ts = await import('/static/frontend/js/textspans.js'); }")
    yield page
    page.close()


@pytest.mark.parametrize("text", TEXTS)
def test_offsets_round_trip_and_match_python(page, text):
    result = page.evaluate(
        """(text) => {
            const ix = new ts.TextIndex(text);
            const out = [];
            for (let cp = 0; cp <= ix.length; cp++) out.push([ix.toUtf16(cp), ix.toCodePoints(ix.toUtf16(cp))]);
            return {length: ix.length, pairs: out, words: [...new Intl.Segmenter(undefined,
              {granularity: 'word'}).segment(text)]
                .filter(s => s.isWordLike).map(s => [ix.toCodePoints(s.index),
                  ix.toCodePoints(s.index + s.segment.length)])};
        }""",
        text,
    )
    assert result["length"] == len(text)
    assert all(cp == i for i, (_, cp) in enumerate(result["pairs"]))
    for start, end in result["words"]:  # every word the browser sees is a whole Python substring
        assert text[start:end].strip() == text[start:end] and text[start:end]


@pytest.mark.parametrize(
    "text,selected,expected",
    [
        ("The dam burst at night.", "am burst a", "dam burst at"),  # partial words grow to whole words
        ("The dam burst, at night.", " burst, ", "burst"),  # spaces and punctuation trimmed
        ("Emoji 🎉 party time.", "🎉 par", "party"),  # a lone emoji is not a word
        ("Combining: Ame\u0301lie met.", "me\u0301l", "Ame\u0301lie"),  # accent stays with its letter
        ("中文文本，测试分词。", "文本，测", None),  # CJK: snapped to segmenter words
        ("עברית: השופט קבע כי.", "שופט ק", "השופט קבע"),
    ],
)
def test_snap_to_words(page, text, selected, expected):
    start = text.index(selected)
    span = page.evaluate(
        """([text, start, end]) => {
            const ix = new ts.TextIndex(text);
            const s = ts.snapToWords(text, ix.toUtf16(start), ix.toUtf16(end));
            return s && [ix.toCodePoints(s.start), ix.toCodePoints(s.end)];
        }""",
        [text, start, start + len(selected)],
    )
    assert span is not None
    got = text[span[0] : span[1]]
    if expected is None:  # CJK: whatever the segmenter picks, it covers the selection and trims the comma
        assert got and "，" not in got[0] + got[-1] and text.index(got) <= start
    else:
        assert got == expected


def test_render_select_and_coverage_with_emoji(page):
    text = "Go 🎉 now: the dam burst! Floods followed."
    spans = [
        {"id": 1, "start": text.index("the dam"), "end": text.index("the dam") + 13},
        {"id": 2, "start": text.index("dam"), "end": text.index("Floods")},
    ]
    out = page.evaluate(
        """([text, spans, selStart, selEnd]) => {
            document.body.innerHTML = '<p id="t"></p>';
            const el = document.getElementById('t');
            const ix = new ts.TextIndex(text);
            ts.renderSpans(el, ix, spans);
            // Select programmatically across segment elements, in UTF-16 terms.
            const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
            const at = (u16) => { let off = 0; walker.currentNode = el;
                for (let n = walker.nextNode(); n; n = walker.nextNode()) {
                  if (off + n.data.length >= u16) return [n, u16 - off]; off += n.data.length; } };
            const r = document.createRange(); r.setStart(...at(ix.toUtf16(selStart)));
              r.setEnd(...at(ix.toUtf16(selEnd)));
            getSelection().removeAllRanges(); getSelection().addRange(r);
            return {text: el.textContent, selected: ts.selectedSpan(el, ix),
              segs: [...el.children].map(c => [c.textContent, c.dataset.ids]),
                    coverage: ts.coverage(ix, spans), html: el.innerHTML.includes('<script')};
        }""",
        [text, spans, text.index("am bu"), text.index("am bu") + 5],
    )
    assert out["text"] == text
    assert text[out["selected"]["start"] : out["selected"]["end"]] == "dam burst"
    assert ["dam burst", "1 2"] in out["segs"] and ["the ", "1"] in out["segs"]
    non_space = [c for c in text if not c.isspace()]
    covered = [c for i, c in enumerate(text) if not c.isspace() and any(s["start"] <= i < s["end"] for s in spans)]
    assert out["coverage"] == pytest.approx(len(covered) / len(non_space))


def test_user_text_is_never_html(page):
    html = page.evaluate(
        """() => { document.body.innerHTML = '<p id="t"></p>'; const el = document.getElementById('t');
            ts.renderSpans(el, new ts.TextIndex('<img src=x onerror=alert(1)> & co'), []); return el.innerHTML; }"""
    )
    assert "<img" not in html and "&lt;img" in html


def test_span_view_patches_exactly_what_a_fresh_rendering_shows(page):
    """SpanView.update replaces only the stretch whose spans changed; after 200 random changes
    (add, remove, move; overlapping; emoji offsets) the text shows what a fresh rendering shows."""
    result = page.evaluate(
        """() => {
            const text = 'Emoji 🎉 party and Zoe\\u0308 met; the dam burst. ' .repeat(12);
            const ix = new ts.TextIndex(text);
            let seed = 7; const rand = (n) => { seed = (seed * 1103515245 + 12345) % 2147483648; return seed % n; };
            const patched = document.createElement('div'), fresh = document.createElement('div');
            const view = new ts.SpanView(patched, ix);
            let spans = [], next = 1, repainted = 0;
            const shown = (el) => [...el.children].map((s) => `${s.dataset.ids}|${s.textContent}|${s.className}`)
                .join('\\n');
            for (let round = 0; round < 200; round++) {
                const kind = rand(3);
                if (kind === 0 || spans.length < 3) { const a = rand(ix.length); spans.push({id: next++, start: a,
                  end: Math.min(ix.length, a + 1 + rand(30))}); }
                else if (kind === 1) spans.splice(rand(spans.length), 1);
                else { const s = spans[rand(spans.length)]; s.start = rand(ix.length - 1);
                  s.end = Math.min(ix.length, s.start + 1 + rand(20)); }
                if (view.update(spans.map((s) => ({...s})))) repainted++;
                ts.renderSpans(fresh, ix, spans);
                if (shown(patched) !== shown(fresh)) return {round, patched: shown(patched), fresh: shown(fresh)};
                if (patched.textContent !== text) return {round, text: patched.textContent};
            }
            const untouched = patched.firstChild;
            view.update(spans.map((s) => ({...s})));   // nothing changed: nothing repainted
            return {ok: true, repainted, same: patched.firstChild === untouched};
        }"""
    )
    assert result.get("ok"), result
    assert result["repainted"] > 150 and result["same"]
