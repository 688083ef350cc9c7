// <pipeline-schedule>: the pipeline-schedule explorer (issue 41; deck 11).
//
// Attributes: stages (p devices), microbatches (m), schedule ("gpipe", "1f1b" or "interleaved"), chunks
// (v, interleaved only), ratio (a backward's cost over a forward's), plus slidegen's alt, print-state
// ("schedule=1f1b; stages=4; microbatches=8", separated by ";": the state the static picture shows) and
// fallback. PipelineSchedule.simulate(cfg) is model/pipeline.py's simulate, op for op:
// tests/test_components_pipeline_schedule.py holds its bubble and peak in flight to the Python's.
// Plain ES2020, no imports, no network. Keys it uses do not reach reveal.js (stopPropagation).

(function () {
  "use strict";

  const SVG = "http://www.w3.org/2000/svg";
  const SCHEDULES = ["gpipe", "1f1b", "interleaved"];
  const LABELS = { gpipe: "GPipe", "1f1b": "1F1B", interleaved: "interleaved 1F1B" };
  const W = 640, LEFT = 70, RIGHT = 10, TOP = 8, ROW = 34, GAP = 6, AXIS = 30;
  const MAX_P = 8, MAX_M = 32, MAX_V = 4;

  function num(value, fallback) {
    const x = Number(value);
    return value === null || value === "" || !Number.isFinite(x) ? fallback : x;
  }

  function clampInt(value, lo, hi, fallback) {
    return Math.min(hi, Math.max(lo, Math.round(num(value, fallback))));
  }

  function el(tag, attrs, parent) {
    const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (parent) parent.appendChild(node);
    return node;
  }

  // The order of [kind, micro-batch, chunk] a device runs (model.pipeline.device_order).
  function deviceOrder(p, m, v, name, d) {
    const order = [];
    if (name === "gpipe") {
      for (let i = 0; i < m; i++) order.push(["F", i, 0]);
      for (let i = 0; i < m; i++) order.push(["B", i, 0]);
      return order;
    }
    if (name === "1f1b") {
      const warm = Math.min(p - d - 1, m);
      for (let i = 0; i < warm; i++) order.push(["F", i, 0]);
      let f = warm, b = 0;
      for (; f < m; f++, b++) order.push(["F", f, 0], ["B", b, 0]);
      for (; b < m; b++) order.push(["B", b, 0]);
      return order;
    }
    const units = m * v;
    const unit = (k, backward) => {
      const group = Math.floor(k / (p * v)), pos = k % (p * v);
      const chunk = Math.floor(k / p) % v;
      return [group * p + (pos % p), backward ? v - 1 - chunk : chunk];
    };
    const warm = Math.min((p - d - 1) * 2 + (v - 1) * p, units);
    for (let k = 0; k < warm; k++) order.push(["F", ...unit(k, false)]);
    let f = warm, b = 0;
    for (; f < units; f++, b++) order.push(["F", ...unit(f, false)], ["B", ...unit(b, true)]);
    for (; b < units; b++) order.push(["B", ...unit(b, true)]);
    return order;
  }

  class PipelineSchedule extends HTMLElement {
    static get observedAttributes() {
      return ["stages", "microbatches", "schedule", "chunks", "ratio", "print-state", "alt"];
    }

    // Why a setting is not defined, or "" (model.pipeline.check).
    static problem(cfg) {
      if (cfg.schedule === "interleaved" && cfg.m % cfg.p) return `interleaving needs m a multiple of p (${cfg.p})`;
      return "";
    }

    // cfg {p, m, v, schedule, ratio} -> {ops, makespan, busy, bubble, bubbleOverWork, peakInFlight}.
    static simulate(cfg) {
      const { p, m, ratio } = cfg;
      const v = cfg.schedule === "interleaved" ? cfg.v : 1;
      const stages = p * v, fCost = 1 / v, bCost = ratio / v;
      const orders = [];
      for (let d = 0; d < p; d++) orders.push(deviceOrder(p, m, v, cfg.schedule, d));
      const done = new Map(), free = new Array(p).fill(0), next = new Array(p).fill(0), ops = [];
      let remaining = orders.reduce((s, o) => s + o.length, 0);
      while (remaining) {
        let progressed = false;
        for (let d = 0; d < p; d++) {
          while (next[d] < orders[d].length) {
            const [kind, mb, chunk] = orders[d][next[d]];
            const stage = chunk * p + d;
            let dep = null;
            if (kind === "F") dep = stage > 0 ? `F,${mb},${stage - 1}` : null;
            else dep = stage < stages - 1 ? `B,${mb},${stage + 1}` : `F,${mb},${stage}`;
            if (dep !== null && !done.has(dep)) break;
            const start = Math.max(free[d], dep !== null ? done.get(dep) : 0);
            const end = start + (kind === "F" ? fCost : bCost);
            done.set(`${kind},${mb},${stage}`, end);
            free[d] = end;
            ops.push({ device: d, kind, mb, chunk, start, end });
            next[d] += 1;
            remaining -= 1;
            progressed = true;
          }
        }
        if (!progressed) throw new Error(`schedule ${cfg.schedule} deadlocks at p=${p}, m=${m}, v=${v}`);
      }
      const makespan = Math.max(...free), busy = m * (1 + ratio);
      let peak = 0;
      for (let d = 0; d < p; d++) {
        let held = 0;
        for (const op of ops) if (op.device === d) { held += op.kind === "F" ? 1 : -1; peak = Math.max(peak, held); }
      }
      return { ops, makespan, busy, bubble: 1 - busy / makespan, bubbleOverWork: makespan / busy - 1,
               peakInFlight: peak / v };
    }

    constructor() {
      super();
      this._built = false;
    }

    // The configuration the attributes give (bad or missing values fall back to the deck's default).
    config() {
      const schedule = (this.getAttribute("schedule") || "1f1b").trim().toLowerCase();
      return {
        p: clampInt(this.getAttribute("stages"), 1, MAX_P, 4),
        m: clampInt(this.getAttribute("microbatches"), 1, MAX_M, 8),
        v: clampInt(this.getAttribute("chunks"), 1, MAX_V, 2),
        schedule: SCHEDULES.includes(schedule) ? schedule : "1f1b",
        ratio: Math.min(4, Math.max(0.25, num(this.getAttribute("ratio"), 2))),
      };
    }

    _applyPrintState() {
      const names = { schedule: "schedule", stages: "stages", p: "stages", microbatches: "microbatches", m: "microbatches",
                      chunks: "chunks", v: "chunks", ratio: "ratio" };
      for (const part of (this.getAttribute("print-state") || "").split(";")) {
        const [k, v] = part.split("=").map((s) => (s || "").trim());
        if (k && names[k] && v) this.setAttribute(names[k], v);
      }
    }

    connectedCallback() {
      if (!this._built) this._build();
      this._applyPrintState();
      this._render();
    }

    attributeChangedCallback(name) {
      if (!this._built) return;
      if (name === "print-state") this._applyPrintState();
      this._render();
    }

    _build() {
      this._built = true;
      this.classList.add("pipeline-schedule");
      if (!this.hasAttribute("role")) this.setAttribute("role", "group");
      if (this.getAttribute("alt")) this.setAttribute("aria-label", this.getAttribute("alt"));
      const controls = el("div", { class: "ps-controls" }, this);
      const field = (label, input) => {
        const wrap = el("label", { class: "ps-field" }, controls);
        el("span", {}, wrap).textContent = label;
        wrap.appendChild(input);
        return input;
      };
      this._schedule = field("", el("select", { "aria-label": "schedule" }));
      for (const name of SCHEDULES) el("option", { value: name }, this._schedule).textContent = LABELS[name];
      this._p = field("p", el("input", { type: "number", min: "1", max: String(MAX_P), step: "1", "aria-label": "stages p" }));
      this._m = field("m", el("input", { type: "number", min: "1", max: String(MAX_M), step: "1", "aria-label": "micro-batches m" }));
      this._v = field("v", el("input", { type: "number", min: "1", max: String(MAX_V), step: "1", "aria-label": "chunks v" }));
      this._r = field("B/F", el("input", { type: "number", min: "0.25", max: "4", step: "0.25", "aria-label": "backward over forward cost" }));
      this._svg = el("svg:svg", { class: "ps-plot", role: "img", "aria-hidden": "true" }, this);
      this._readout = el("output", { class: "ps-readout", "aria-live": "polite" }, this);

      const set = (name, input) => input.value !== "" && this.setAttribute(name, input.value);
      this._schedule.addEventListener("change", () => this.setAttribute("schedule", this._schedule.value));
      this._p.addEventListener("input", () => set("stages", this._p));
      this._m.addEventListener("input", () => set("microbatches", this._m));
      this._v.addEventListener("input", () => set("chunks", this._v));
      this._r.addEventListener("input", () => set("ratio", this._r));
      // keys typed into the controls belong to them, not to reveal.js (arrows would change the slide)
      this.addEventListener("keydown", (event) => event.stopPropagation());
    }

    _render() {
      const cfg = this.config();
      const active = document.activeElement;
      if (active !== this._schedule) this._schedule.value = cfg.schedule;
      if (active !== this._p) this._p.value = String(cfg.p);
      if (active !== this._m) this._m.value = String(cfg.m);
      if (active !== this._v) this._v.value = String(cfg.v);
      if (active !== this._r) this._r.value = String(cfg.ratio);
      this._v.disabled = cfg.schedule !== "interleaved";
      const svg = this._svg;
      svg.textContent = "";
      const H = TOP + cfg.p * ROW + AXIS;
      svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
      const problem = PipelineSchedule.problem(cfg);
      if (problem) {
        el("svg:text", { x: W / 2, y: H / 2, "text-anchor": "middle", class: "ps-tick" }, svg).textContent = problem;
        this._readout.textContent = problem;
        this.dataset.bubble = "";
        return;
      }
      const sim = PipelineSchedule.simulate(cfg);
      const x = (t) => LEFT + (W - LEFT - RIGHT) * (t / sim.makespan);
      for (let d = 0; d < cfg.p; d++) {
        const y = TOP + d * ROW;
        el("svg:rect", { x: LEFT, y: y + GAP / 2, width: W - LEFT - RIGHT, height: ROW - GAP, class: "ps-idle" }, svg);
        el("svg:text", { x: LEFT - 8, y: y + ROW / 2 + 7, "text-anchor": "end", class: "ps-tick" }, svg).textContent =
          `GPU ${d + 1}`;
      }
      const big = sim.ops.length <= 160;
      for (const op of sim.ops) {
        const y = TOP + op.device * ROW + GAP / 2;
        const cls = `ps-op ps-${op.kind === "F" ? "fwd" : "bwd"}${op.chunk % 2 ? " ps-odd" : ""}`;
        el("svg:rect", { x: x(op.start), y, width: Math.max(0.5, x(op.end) - x(op.start)), height: ROW - GAP, class: cls }, svg);
        if (big && x(op.end) - x(op.start) >= 6 + 12 * String(op.mb + 1).length) {  // room for the 20px digits
          el("svg:text", { x: (x(op.start) + x(op.end)) / 2, y: y + (ROW - GAP) / 2 + 6, "text-anchor": "middle",
                           class: `ps-label ps-label-${op.kind === "F" ? "fwd" : "bwd"}` }, svg).textContent = String(op.mb + 1);
        }
      }
      const axisY = TOP + cfg.p * ROW;
      el("svg:line", { x1: LEFT, y1: axisY, x2: W - RIGHT, y2: axisY, class: "ps-axis" }, svg);
      el("svg:text", { x: LEFT, y: H - 6, "text-anchor": "start", class: "ps-tick" }, svg).textContent = "time →";
      let lx = LEFT + 110;  // the legend: a swatch per kind of time, after the axis name
      for (const [cls, name] of [["ps-op ps-fwd", "forward"], ["ps-op ps-bwd", "backward"], ["ps-idle", "idle"]]) {
        el("svg:rect", { x: lx, y: H - 22, width: 18, height: 18, class: cls }, svg);
        el("svg:text", { x: lx + 24, y: H - 6, "text-anchor": "start", class: "ps-tick" }, svg).textContent = name;
        lx += 40 + 11 * name.length;
      }
      const pct = (100 * sim.bubble).toFixed(1);
      const peak = Number.isInteger(sim.peakInFlight) ? String(sim.peakInFlight) : sim.peakInFlight.toFixed(2);
      this._readout.textContent = `${LABELS[cfg.schedule]}: idle ${pct}% of each GPU's time · ` +
        `at most ${peak} micro-batches' activations held`;
      this.dataset.bubble = String(sim.bubble);
      this.dataset.peak = String(sim.peakInFlight);
    }
  }

  customElements.define("pipeline-schedule", PipelineSchedule);
})();
