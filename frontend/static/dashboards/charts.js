// Draws the dashboards' charts with plotly.js (served by the app: static/vendor/plotly.min.js).
// Each chart is a [data-chart] element whose rows come from the <script type="application/json">
// named by data-source (Django's json_script): no inline code, no inline styles, CSP-clean. The
// same rows are the chart's CSV download. Redrawn when live.js swaps in fresh figures.

const CONFIG = { displayModeBar: false, responsive: true };
const css = (name, fallback) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
const COLORS = () => ({ accent: css("--accent", "#2f5d9e"), ref: "#8a4f9e", bad: "#a12a2a", muted: "#9aa6b5", line: "#e3e6ea", fg: css("--fg", "#1d232b") });
const FONT = { family: "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", size: 12 };
const fixed = (v, digits = 3) => (v === null || v === undefined ? "—" : Number(v).toFixed(digits));

function baseLayout(element, extra) {
  return {
    font: FONT, margin: { l: 56, r: 16, t: 12, b: 56 }, paper_bgcolor: "#fff", plot_bgcolor: "#fff", showlegend: false,
    hoverlabel: { font: FONT }, height: 320,
    xaxis: { title: { text: element.dataset.xTitle || "" }, gridcolor: COLORS().line, zeroline: false, automargin: true },
    yaxis: { title: { text: element.dataset.yTitle || "" }, gridcolor: COLORS().line, zeroline: false, automargin: true },
    ...extra,
  };
}

// Systems: mean (dot), its bootstrap interval (thick bar), min–max over topics (thin grey line).
function systems(element, rows) {
  const c = COLORS();
  const names = rows.map((r) => r.system);
  const traces = [{
    type: "scatter", mode: "markers", x: names, y: rows.map((r) => r.mean), hoverinfo: "skip",
    marker: { size: 1, color: "rgba(0,0,0,0)" },
    error_y: { type: "data", symmetric: false, array: rows.map((r) => r.max - r.mean), arrayminus: rows.map((r) => r.mean - r.min), color: c.muted, thickness: 1.2, width: 3 },
  }];
  for (const kind of ["peer", "reference"]) {
    const own = rows.filter((r) => r.kind === kind);
    if (!own.length) continue;
    traces.push({
      type: "scatter", mode: "markers", name: kind, x: own.map((r) => r.system), y: own.map((r) => r.mean),
      marker: { size: 8, color: kind === "peer" ? c.accent : c.ref, line: { color: "#fff", width: 1 } },
      error_y: { type: "data", symmetric: false, array: own.map((r) => (r.high ?? r.mean) - r.mean), arrayminus: own.map((r) => r.mean - (r.low ?? r.mean)), color: kind === "peer" ? c.accent : c.ref, thickness: 3, width: 0 },
      customdata: own.map((r) => [r.kind, fixed(r.low), fixed(r.high), fixed(r.sd), fixed(r.min), fixed(r.max), r.topics]),
      hovertemplate: "%{customdata[0]} %{x}: %{y:.3f}<br>95% interval %{customdata[1]} – %{customdata[2]}<br>sd %{customdata[3]}, min %{customdata[4]}, max %{customdata[5]}<br>%{customdata[6]} topics<extra></extra>",
    });
  }
  const layout = baseLayout(element, { height: 340 });
  layout.xaxis = { ...layout.xaxis, type: "category", categoryorder: "array", categoryarray: names, tickangle: names.length > 24 ? -60 : 0 };
  return [traces, layout];
}

// Agreement: annotator A's modified score (x) against B's (y), the diagonal dashed, large gaps red.
function agreement(element, rows) {
  const c = COLORS();
  const top = Math.max(0.1, ...rows.flatMap((r) => [r.a_score, r.b_score])) * 1.08;
  const trace = {
    type: "scatter", mode: "markers", x: rows.map((r) => r.a_score), y: rows.map((r) => r.b_score),
    marker: { size: rows.map((r) => (r.highlight ? 13 : 8)), color: rows.map((r) => (r.flagged ? c.bad : c.accent)), opacity: 0.85,
              line: { color: rows.map((r) => (r.highlight ? c.fg : "#fff")), width: rows.map((r) => (r.highlight ? 2 : 1)) } },
    customdata: rows.map((r) => [r.peer, fixed(r.difference)]),
    hovertemplate: "peer %{customdata[0]}<br>x %{x:.3f}, y %{y:.3f}<br>difference %{customdata[1]}<extra></extra>",
  };
  const layout = baseLayout(element, { height: 360, width: undefined });
  layout.xaxis = { ...layout.xaxis, range: [0, top], constrain: "domain" };
  layout.yaxis = { ...layout.yaxis, range: [0, top], scaleanchor: "x", scaleratio: 1 };
  layout.shapes = [{ type: "line", x0: 0, y0: 0, x1: top, y1: top, line: { color: c.muted, dash: "dash", width: 1 } }];
  return [[trace], layout];
}

// Tiers: one small bar chart per pyramid (a grid of subplots in one figure).
function tiers(element, rows) {
  const c = COLORS();
  const pyramids = [...new Map(rows.map((r) => [r.pyramid, r])).values()];
  const columns = Math.min(4, pyramids.length);
  const lines = Math.ceil(pyramids.length / columns);
  const traces = [];
  const layout = baseLayout(element, {
    height: 150 * lines + 40, margin: { l: 36, r: 8, t: 24, b: 28 },
    grid: { rows: lines, columns, pattern: "independent", xgap: 0.12, ygap: 0.45 }, annotations: [],
  });
  pyramids.forEach((p, i) => {
    const own = rows.filter((r) => r.pyramid === p.pyramid);
    const axis = i === 0 ? "" : String(i + 1);
    traces.push({
      type: "bar", x: own.map((r) => r.weight), y: own.map((r) => r.scus), xaxis: `x${axis}`, yaxis: `y${axis}`,
      marker: { color: c.accent, opacity: 0.85 }, text: own.map((r) => String(r.scus)), textposition: "outside", cliponaxis: false,
      hovertemplate: `${p.topic}: weight %{x}, %{y} SCUs<extra></extra>`,
    });
    layout[`xaxis${axis}`] = { dtick: 1, tickfont: { size: 10 }, fixedrange: true };
    layout[`yaxis${axis}`] = { tickfont: { size: 9 }, gridcolor: c.line, fixedrange: true, rangemode: "tozero",
                              range: [0, Math.max(1, ...own.map((r) => r.scus)) * 1.3] };
    layout.annotations.push({ text: `${p.topic} · ${p.references} refs${p.creator ? " · " + p.creator : ""}`, showarrow: false,
                              xref: `x${axis} domain`, yref: `y${axis} domain`, x: 0, y: 1.18, xanchor: "left", font: { size: 11 } });
  });
  return [traces, layout];
}

// Stability: mean Kendall tau against k, with the 5th–95th percentile band.
function stability(element, rows) {
  const c = COLORS();
  const k = rows.map((r) => r.k);
  const traces = [
    { type: "scatter", mode: "lines", x: k, y: rows.map((r) => r.high), line: { width: 0 }, hoverinfo: "skip" },
    { type: "scatter", mode: "lines", x: k, y: rows.map((r) => r.low), line: { width: 0 }, fill: "tonexty", fillcolor: "rgba(47,93,158,0.15)", hoverinfo: "skip" },
    { type: "scatter", mode: "lines+markers", x: k, y: rows.map((r) => r.mean), line: { color: c.accent, width: 2 }, marker: { size: 6 },
      customdata: rows.map((r) => [fixed(r.low), fixed(r.high), r.draws]),
      hovertemplate: "k = %{x}: tau %{y:.3f}<br>5%–95%: %{customdata[0]} – %{customdata[1]}<br>%{customdata[2]} rankings<extra></extra>" },
  ];
  const layout = baseLayout(element, { height: 280 });
  layout.xaxis = { ...layout.xaxis, dtick: k.length > 12 ? 2 : 1 };
  layout.yaxis = { ...layout.yaxis, range: [Math.min(0, ...rows.map((r) => r.low)) - 0.02, 1.02] };
  return [traces, layout];
}

// Lightweight against expert: one point per system (means over the summaries both scored).
function lite(element, rows) {
  const c = COLORS();
  const trace = {
    type: "scatter", mode: "markers", x: rows.map((r) => r.lightweight), y: rows.map((r) => r.expert),
    marker: { size: 8, color: c.accent, opacity: 0.85, line: { color: "#fff", width: 1 } },
    customdata: rows.map((r) => [r.system, r.summaries]),
    hovertemplate: "system %{customdata[0]}: lightweight %{x:.3f}, expert %{y:.3f}<br>%{customdata[1]} summaries<extra></extra>",
  };
  return [[trace], baseLayout(element, { height: 340 })];
}

const DRAW = { systems, agreement, tiers, stability, lite };

export function drawCharts(root = document) {
  for (const element of root.querySelectorAll("[data-chart]")) {
    const source = document.getElementById(element.dataset.source);
    const draw = DRAW[element.dataset.chart];
    if (!source || !draw) continue;
    const rows = JSON.parse(source.textContent);
    if (!rows.length) {
      element.textContent = element.dataset.emptyText || "Nothing to plot yet.";
      element.classList.add("empty");
      continue;
    }
    const [traces, layout] = draw(element, rows);
    window.Plotly.react(element, traces, layout, CONFIG);
    element.dataset.drawn = String(rows.length);
  }
}

function whenPlotly(callback) {
  if (window.Plotly) callback();
  else window.addEventListener("load", callback, { once: true });
}

whenPlotly(() => drawCharts());
document.addEventListener("figures:replaced", () => whenPlotly(() => drawCharts()));
