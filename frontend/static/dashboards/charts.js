// Draws the dashboards' charts with Chart.js (served by the app: static/vendor/chart.umd.min.js,
// pinned in package.json; frontend/vendor.py says why not plotly.js). Each chart is a [data-chart]
// element whose rows come from the <script type="application/json"> named by data-source (Django's
// json_script): no inline code, no inline styles (sizes are charts.css's), CSP-clean. The same rows
// are the chart's CSV download. Redrawn when live.js swaps in fresh figures.
//
// Drawn at once (no animation): a first visit is ready when the chart is painted.

const Chart = window.Chart;
const css = (name, fallback) => getComputedStyle(document.documentElement).getPropertyValue(name).trim() || fallback;
const COLORS = () => ({ accent: css("--accent", "#2f5d9e"), ref: "#8a4f9e", bad: "#a12a2a", muted: "#9aa6b5", line: "#e3e6ea", fg: css("--fg", "#1d232b") });
const FONT = { family: "system-ui, -apple-system, Segoe UI, Roboto, sans-serif", size: 12 };
const fixed = (v, digits = 3) => (v === null || v === undefined ? "—" : Number(v).toFixed(digits));
const alpha = (color, a) => Chart.helpers.color(color).alpha(a).rgbString();

// Vertical error bars: a dataset's `errorBars` ([{low, high}] by point) drawn under its points,
// `errorBarColor`, `errorBarWidth` (line width) and `errorBarCap` (half the cap's width, 0: none);
// the y axis is widened to show them whole.
const errorBars = {
  id: "errorBars",
  afterDataLimits(chart, { scale }) {
    if (scale.axis !== "y") return;
    for (const dataset of chart.data.datasets) {
      for (const bar of dataset.errorBars || []) {
        if (!bar) continue;
        scale.min = Math.min(scale.min, bar.low);
        scale.max = Math.max(scale.max, bar.high);
      }
    }
  },
  beforeDatasetsDraw(chart) {
    const { ctx } = chart;
    chart.data.datasets.forEach((dataset, i) => {
      if (!dataset.errorBars) return;
      const meta = chart.getDatasetMeta(i);
      const y = chart.scales[meta.yAxisID];
      ctx.save();
      ctx.strokeStyle = dataset.errorBarColor;
      ctx.lineWidth = dataset.errorBarWidth;
      dataset.errorBars.forEach((bar, j) => {
        const point = meta.data[j];
        if (!bar || !point) return;
        const [top, bottom] = [y.getPixelForValue(bar.high), y.getPixelForValue(bar.low)];
        const cap = dataset.errorBarCap || 0;
        ctx.beginPath();
        ctx.moveTo(point.x, top);
        ctx.lineTo(point.x, bottom);
        if (cap) {
          for (const end of [top, bottom]) {
            ctx.moveTo(point.x - cap, end);
            ctx.lineTo(point.x + cap, end);
          }
        }
        ctx.stroke();
      });
      ctx.restore();
    });
  },
};

// Each bar's value written above it (datasets with `barLabels`).
const barLabels = {
  id: "barLabels",
  afterDatasetsDraw(chart) {
    const { ctx } = chart;
    chart.data.datasets.forEach((dataset, i) => {
      if (!dataset.barLabels) return;
      ctx.save();
      ctx.fillStyle = COLORS().fg;
      ctx.font = `10px ${FONT.family}`;
      ctx.textAlign = "center";
      ctx.textBaseline = "bottom";
      chart.getDatasetMeta(i).data.forEach((bar, j) => ctx.fillText(String(dataset.data[j].y), bar.x, bar.y - 2));
      ctx.restore();
    });
  },
};

function axis(title, extra = {}) {
  return { title: { display: Boolean(title), text: title }, grid: { color: COLORS().line }, border: { display: false }, ...extra };
}

function options(element, extra = {}) {
  const { scales = {}, tooltip = {}, ...rest } = extra;
  return {
    animation: false, responsive: true, maintainAspectRatio: false,
    interaction: { mode: "nearest", intersect: false },
    layout: { padding: { top: 12, right: 16 } },
    plugins: { legend: { display: false }, tooltip: { displayColors: false, ...tooltip } },
    scales: {
      x: axis(element.dataset.xTitle || "", scales.x),
      y: axis(element.dataset.yTitle || "", scales.y),
    },
    ...rest,
  };
}

// Only the datasets that say what their points are (not the whiskers, the band's edges, the diagonal).
const described = (item) => !item.dataset.silent;
const point = (items) => items[0].raw;

// Systems: mean (dot), its bootstrap interval (thick bar), min–max over topics (thin grey line).
function systems(element, rows) {
  const c = COLORS();
  const names = rows.map((r) => r.system);
  const datasets = [{
    silent: true, data: rows.map((r) => ({ x: r.system, y: r.mean })), pointRadius: 0, pointHitRadius: 0,
    errorBars: rows.map((r) => ({ low: r.min, high: r.max })), errorBarColor: c.muted, errorBarWidth: 1.2, errorBarCap: 3,
  }];
  for (const kind of ["peer", "reference"]) {
    const own = rows.filter((r) => r.kind === kind);
    if (!own.length) continue;
    const color = kind === "peer" ? c.accent : c.ref;
    datasets.push({
      label: kind, data: own.map((r) => ({ x: r.system, y: r.mean, row: r })),
      pointRadius: 4, pointHoverRadius: 5, pointBackgroundColor: color, pointBorderColor: "#fff", pointBorderWidth: 1,
      errorBars: own.map((r) => ({ low: r.low ?? r.mean, high: r.high ?? r.mean })), errorBarColor: color, errorBarWidth: 3,
    });
  }
  return {
    type: "line", data: { labels: names, datasets },
    options: options(element, {
      datasets: { line: { showLine: false } },
      scales: { x: { offset: true, ticks: { autoSkip: false, maxRotation: names.length > 24 ? 60 : 0, minRotation: names.length > 24 ? 60 : 0 } },
                y: { beginAtZero: true, grace: "5%" } },   // scores: from 0, a little room above the highest
      tooltip: {
        filter: described,
        callbacks: {
          title: (items) => { const r = point(items).row; return `${r.kind} ${r.system}: ${fixed(r.mean)}`; },
          label: (item) => {
            const r = item.raw.row;
            return [`95% interval ${fixed(r.low)} – ${fixed(r.high)}`, `sd ${fixed(r.sd)}, min ${fixed(r.min)}, max ${fixed(r.max)}`, `${r.topics} topics`];
          },
        },
      },
    }),
  };
}

// Agreement: annotator A's modified score (x) against B's (y), the diagonal dashed, large gaps red.
function agreement(element, rows) {
  const c = COLORS();
  const top = Math.max(0.1, ...rows.flatMap((r) => [r.a_score, r.b_score])) * 1.08;
  const range = { type: "linear", min: 0, max: top, ticks: { includeBounds: false } };
  return {
    type: "scatter",
    data: { datasets: [
      { data: rows.map((r) => ({ x: r.a_score, y: r.b_score, row: r })),
        pointRadius: rows.map((r) => (r.highlight ? 6.5 : 4)), pointHoverRadius: rows.map((r) => (r.highlight ? 7.5 : 5)),
        pointBackgroundColor: rows.map((r) => alpha(r.flagged ? c.bad : c.accent, 0.85)),
        pointBorderColor: rows.map((r) => (r.highlight ? c.fg : "#fff")), pointBorderWidth: rows.map((r) => (r.highlight ? 2 : 1)) },
      { silent: true, type: "line", data: [{ x: 0, y: 0 }, { x: top, y: top }], borderColor: c.muted, borderWidth: 1, borderDash: [5, 4],
        pointRadius: 0, pointHitRadius: 0 },
    ] },
    // A square chart with the same range on both axes: the diagonal is the line of equal scores.
    options: options(element, {
      maintainAspectRatio: true, aspectRatio: 1,
      scales: { x: range, y: range },
      tooltip: {
        filter: described,
        callbacks: {
          title: (items) => `peer ${point(items).row.peer}`,
          label: (item) => [`x ${fixed(item.raw.x)}, y ${fixed(item.raw.y)}`, `difference ${fixed(item.raw.row.difference)}`],
        },
      },
    }),
  };
}

// Tiers: one small bar chart per pyramid (a grid of small charts, each titled).
function tiers(element, rows) {
  const c = COLORS();
  const pyramids = [...new Map(rows.map((r) => [r.pyramid, r])).values()];
  return pyramids.map((p) => {
    const own = rows.filter((r) => r.pyramid === p.pyramid);
    const top = Math.max(1, ...own.map((r) => r.scus)) * 1.3;
    return {
      title: `${p.topic} · ${p.references} refs${p.creator ? " · " + p.creator : ""}`,
      config: {
        type: "bar",
        data: { labels: own.map((r) => String(r.weight)), datasets: [{
          data: own.map((r) => ({ x: String(r.weight), y: r.scus })), barLabels: true,
          backgroundColor: alpha(c.accent, 0.85), categoryPercentage: 0.9, barPercentage: 1,
        }] },
        options: {
          animation: false, maintainAspectRatio: false, events: ["mousemove", "mouseout"],
          layout: { padding: { top: 4, right: 4 } },
          plugins: { legend: { display: false }, tooltip: { displayColors: false, callbacks: {
            title: () => "", label: (item) => `${p.topic}: weight ${item.raw.x}, ${item.raw.y} SCUs`,
          } } },
          scales: {
            x: { grid: { display: false }, ticks: { font: { size: 10 } } },
            y: { min: 0, suggestedMax: top, grid: { color: c.line }, border: { display: false }, ticks: { font: { size: 9 }, precision: 0 } },
          },
        },
      },
    };
  });
}

// Stability: mean Kendall tau against k, with the 5th–95th percentile band.
function stability(element, rows) {
  const c = COLORS();
  const k = rows.map((r) => r.k);
  const edge = { silent: true, pointRadius: 0, pointHitRadius: 0, borderWidth: 0 };
  return {
    type: "line",
    data: { datasets: [
      { ...edge, data: rows.map((r) => ({ x: r.k, y: r.high })) },
      { ...edge, data: rows.map((r) => ({ x: r.k, y: r.low })), fill: "-1", backgroundColor: "rgba(47,93,158,0.15)" },
      { data: rows.map((r) => ({ x: r.k, y: r.mean, row: r })), borderColor: c.accent, borderWidth: 2,
        pointRadius: 3, pointBackgroundColor: c.accent, pointBorderColor: c.accent },
    ] },
    options: options(element, {
      scales: {
        // Whole k only; a single k between its neighbours (k - 1 and k + 1), not on a hair-thin range.
        x: { type: "linear", bounds: "data", ticks: { stepSize: k.length > 12 ? 2 : 1, precision: 0 },
             ...(new Set(k).size === 1 ? { min: k[0] - 1, max: k[0] + 1 } : {}) },
        y: { min: Math.min(0, ...rows.map((r) => r.low)) - 0.02, max: 1.02, ticks: { includeBounds: false } },
      },
      tooltip: {
        filter: described,
        callbacks: {
          title: (items) => `k = ${point(items).x}: tau ${fixed(point(items).y)}`,
          label: (item) => [`5%–95%: ${fixed(item.raw.row.low)} – ${fixed(item.raw.row.high)}`, `${item.raw.row.draws} rankings`],
        },
      },
    }),
  };
}

// Lightweight against expert: one point per system (means over the summaries both scored).
function lite(element, rows) {
  const c = COLORS();
  return {
    type: "scatter",
    data: { datasets: [{
      data: rows.map((r) => ({ x: r.lightweight, y: r.expert, row: r })),
      pointRadius: 4, pointHoverRadius: 5, pointBackgroundColor: alpha(c.accent, 0.85), pointBorderColor: "#fff", pointBorderWidth: 1,
    }] },
    options: options(element, {
      scales: { x: { grace: "5%" }, y: { grace: "5%" } },   // no point on an edge
      tooltip: { callbacks: {
        title: (items) => `system ${point(items).row.system}: lightweight ${fixed(point(items).x)}, expert ${fixed(point(items).y)}`,
        label: (item) => `${item.raw.row.summaries} summaries`,
      } },
    }),
  };
}

const DRAW = { systems, agreement, tiers, stability, lite };
const drawn = new Set();   // charts still alive: destroyed when their figure is replaced

function canvasIn(parent) {
  const box = document.createElement("div");
  box.className = "chart-canvas";
  const canvas = document.createElement("canvas");
  box.append(canvas);
  parent.append(box);
  return canvas;
}

function plot(canvas, config) {
  Chart.defaults.font = { ...Chart.defaults.font, ...FONT };
  Chart.defaults.color = COLORS().fg;
  const chart = new Chart(canvas, { ...config, plugins: [errorBars, barLabels] });
  drawn.add(chart);
  return chart;
}

// Small multiples (tiers): every cell laid out first, one cell measured, all drawn at that size,
// and one observer resizing them all with the grid. A responsive chart measures its own box as it
// is made, and each measure lays the whole page out again after the previous chart changed it:
// 20 pyramids took 120-380 ms on the scores page, most of its scripts' time.
const resizers = new WeakMap();

function plotSmall(element, smalls) {
  element.dataset.columns = String(Math.min(4, smalls.length));   // charts.css lays them out
  const canvases = smalls.map((small) => {
    const cell = document.createElement("div");
    cell.className = "chart-cell";
    const title = document.createElement("p");
    title.className = "chart-title";
    title.textContent = small.title;
    cell.append(title);
    element.append(cell);
    return canvasIn(cell);
  });
  const box = canvases[0].parentNode;
  const [width, height] = [box.clientWidth, box.clientHeight];
  const charts = smalls.map((small, i) => {
    Object.assign(canvases[i], { width, height });
    return plot(canvases[i], { ...small.config, options: { ...small.config.options, responsive: false } });
  });
  const resizer = new ResizeObserver(() => {
    if (!box.isConnected) {   // fresh figures replaced these (live.js): their charts are destroyed
      resizer.disconnect();
      return;
    }
    const [w, h] = [box.clientWidth, box.clientHeight];
    for (const chart of charts) if (chart.width !== w || chart.height !== h) chart.resize(w, h);
  });
  resizer.observe(box);
  resizers.set(element, resizer);
}

// A chart far below the fold is drawn as it comes near the viewport, not with the page: DUC 2006's
// scores page holds 21 tier charts under its tables, and drawing them on load was most of the
// script time before the page was painted. "Near": within half a viewport's height.
const NEAR = 0.5;
const nearView = (element) => {
  const box = element.getBoundingClientRect();
  return box.top < window.innerHeight * (1 + NEAR) && box.bottom > -window.innerHeight * NEAR;
};
const waiting = new Set();
const approaching = new IntersectionObserver((entries) => {
  for (const entry of entries) {
    if (!entry.isIntersecting) continue;
    approaching.unobserve(entry.target);
    waiting.delete(entry.target);
    if (entry.target.isConnected) draw(entry.target);
  }
}, { rootMargin: `${NEAR * 100}% 0px` });

function draw(element) {
  delete element.dataset.deferred;
  const rows = JSON.parse(document.getElementById(element.dataset.source).textContent);
  if (!rows.length) {
    element.textContent = element.dataset.emptyText || "Nothing to plot yet.";
    element.classList.add("empty");
    return;
  }
  const config = DRAW[element.dataset.chart](element, rows);
  if (Array.isArray(config)) plotSmall(element, config);
  else plot(canvasIn(element), config);
  element.dataset.drawn = String(rows.length);
}

export function drawCharts(root = document) {
  for (const element of waiting) {   // figures replaced before their charts came near
    if (!element.isConnected) {
      approaching.unobserve(element);
      waiting.delete(element);
    }
  }
  for (const chart of drawn) {
    if (!chart.canvas?.isConnected) {
      chart.destroy();
      drawn.delete(chart);
    }
  }
  const pending = [];
  for (const element of root.querySelectorAll("[data-chart]")) {
    if (!document.getElementById(element.dataset.source) || !DRAW[element.dataset.chart]) continue;
    for (const canvas of element.querySelectorAll("canvas")) {
      const chart = Chart.getChart(canvas);
      chart?.destroy();
      drawn.delete(chart);
    }
    resizers.get(element)?.disconnect();
    element.replaceChildren();
    delete element.dataset.drawn;
    pending.push(element);
  }
  // Measured before any is drawn: a chart drawn above another moves it.
  const near = pending.map(nearView);
  pending.forEach((element, i) => {
    if (near[i]) draw(element);
    else {
      element.dataset.deferred = "";   // drawn when scrolled near (bench/page_load.py and the tests know it)
      waiting.add(element);
      approaching.observe(element);
    }
  });
}

drawCharts();
document.addEventListener("figures:replaced", () => drawCharts());
