// <clip-threshold>: a gradient-clipping threshold over recorded gradient norms (issue 37; deck 07).
//
// Attributes: run (an experiment id whose record the page exports, default "ch07.bad_batch"; its series
// "all_norms" is (rates, seeds, steps), every step's gradient norm before clipping), rate and seed
// (indices into it, default 0), threshold (default 1), plus slidegen's alt, print-state
// ("threshold=0.5") and fallback. A step is clipped when model.optim.clip_ would scale it:
// threshold / (norm + 1e-6) below 1. ClipThreshold.summary(norms, threshold) is the pure computation,
// and tests/test_components_clip_threshold.py holds it to model/clipping.py's clip_summary.
// Plain ES2020, no imports, no network. Keys it uses do not reach reveal.js (stopPropagation).

(function () {
  "use strict";

  const SVG = "http://www.w3.org/2000/svg";
  const W = 600, H = 190, LEFT = 92, RIGHT = 12, TOP = 12, BOTTOM = 34;
  const NORM_EPS = 1e-6;  // model.optim.clip_ divides by norm + this
  const LOG_MIN = -2, LOG_MAX = 1;  // the slider's range: thresholds 0.01 .. 10, log-spaced

  function num(value, fallback) {
    const x = Number(value);
    return value === null || value === "" || !Number.isFinite(x) ? fallback : x;
  }

  function el(tag, attrs, parent) {
    const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (parent) parent.appendChild(node);
    return node;
  }

  function fmt(x) {
    if (x === 0) return "0";
    const a = Math.abs(x);
    return a >= 1e-3 && a < 1e4 ? String(Number(x.toPrecision(3))) : x.toExponential(2);
  }

  class ClipThreshold extends HTMLElement {
    static get observedAttributes() {
      return ["run", "rate", "seed", "threshold", "print-state", "alt"];
    }

    // What a threshold does to recorded norms, as model/clipping.py's clip_summary computes it.
    static summary(norms, threshold) {
      let clipped = 0, sum = 0, largest = 0;
      for (const n of norms) {
        const scale = threshold / (n + NORM_EPS);
        if (scale < 1) { clipped += 1; sum += scale; }
        if (n > largest) largest = n;
      }
      return {
        clipped: clipped,
        share: norms.length ? clipped / norms.length : 0,
        meanScale: clipped ? sum / clipped : 1,
        largest: largest,
      };
    }

    constructor() {
      super();
      this._built = false;
    }

    norms() {
      const runs = window.SLIDEGEN_RUNS || {};
      const run = runs[this.getAttribute("run") || "ch07.bad_batch"];
      const all = run && run.series ? run.series.all_norms : null;
      if (!Array.isArray(all)) return null;
      const r = Math.max(0, Math.min(all.length - 1, Math.round(num(this.getAttribute("rate"), 0))));
      const bySeed = all[r];
      const s = Math.max(0, Math.min(bySeed.length - 1, Math.round(num(this.getAttribute("seed"), 0))));
      return bySeed[s].map(Number);
    }

    threshold() {
      const state = {};
      for (const part of (this.getAttribute("print-state") || "").split(";")) {
        const [k, v] = part.split("=").map((x) => (x || "").trim());
        if (k) state[k] = v;
      }
      const t = num(state.threshold !== undefined ? state.threshold : this.getAttribute("threshold"), 1);
      return t > 0 ? t : 1;
    }

    connectedCallback() {
      if (!this._built) this._build();
      this._render();
    }

    attributeChangedCallback() {
      if (this._built) this._render();
    }

    _build() {
      this._built = true;
      this.classList.add("clip-threshold");
      if (!this.hasAttribute("role")) this.setAttribute("role", "group");
      if (this.getAttribute("alt")) this.setAttribute("aria-label", this.getAttribute("alt"));
      const svg = el("svg:svg", { viewBox: `0 0 ${W} ${H}`, class: "ct-plot", role: "img", "aria-hidden": "true" }, this);
      this._axes = el("svg:g", { class: "ct-axes" }, svg);
      this._line = el("svg:polyline", { class: "ct-norms", fill: "none" }, svg);
      this._over = el("svg:g", { class: "ct-over" }, svg);
      this._cut = el("svg:line", { class: "ct-cut" }, svg);
      const row = el("div", { class: "ct-controls" }, this);
      const label = el("label", { class: "ct-field" }, row);
      el("span", {}, label).textContent = "threshold";
      this._slider = el("input", { type: "range", min: String(LOG_MIN), max: String(LOG_MAX), step: "0.01",
                                   class: "ct-slider", "aria-label": "clipping threshold" }, label);
      this._readout = el("output", { class: "ct-readout", "aria-live": "polite" }, row);
      this._slider.addEventListener("input", () => {
        const t = fmt(Math.pow(10, Number(this._slider.value)));  // read first: a render resets the slider
        this.removeAttribute("print-state");
        this.setAttribute("threshold", t);
      });
      this.addEventListener("keydown", (event) => event.stopPropagation());
    }

    _render() {
      const norms = this.norms();
      const t = this.threshold();
      if (document.activeElement !== this._slider) this._slider.value = String(Math.log10(t));
      if (!norms || norms.length === 0) {
        this._readout.textContent = "no recorded norms (SLIDEGEN_RUNS) on this page";
        return;
      }
      const s = ClipThreshold.summary(norms, t);
      const lo = Math.min(LOG_MIN, Math.floor(Math.log10(Math.max(1e-12, Math.min(...norms))))), hi = LOG_MAX;
      const x = (i) => LEFT + (W - LEFT - RIGHT) * (norms.length > 1 ? i / (norms.length - 1) : 0);
      const y = (v) => TOP + (H - TOP - BOTTOM) * (1 - (Math.log10(Math.max(v, 1e-12)) - lo) / (hi - lo));
      const clampY = (v) => Math.max(TOP, Math.min(H - BOTTOM, y(v)));
      this._line.setAttribute("points", norms.map((n, i) => `${x(i).toFixed(1)},${clampY(n).toFixed(1)}`).join(" "));
      this._over.textContent = "";
      norms.forEach((n, i) => {
        if (t / (n + NORM_EPS) < 1) el("svg:circle", { cx: x(i), cy: clampY(n), r: 3, class: "ct-dot" }, this._over);
      });
      this._cut.setAttribute("x1", LEFT); this._cut.setAttribute("x2", W - RIGHT);
      this._cut.setAttribute("y1", clampY(t)); this._cut.setAttribute("y2", clampY(t));

      this._axes.textContent = "";
      el("svg:line", { x1: LEFT, y1: H - BOTTOM, x2: W - RIGHT, y2: H - BOTTOM, class: "ct-axis" }, this._axes);
      el("svg:line", { x1: LEFT, y1: TOP, x2: LEFT, y2: H - BOTTOM, class: "ct-axis" }, this._axes);
      const text = (tx, ty, words, anchor, extra) => {
        const node = el("svg:text", Object.assign({ x: tx, y: ty, "text-anchor": anchor, class: "ct-tick" }, extra || {}), this._axes);
        node.textContent = words;
      };
      for (let e = lo; e <= hi; e++) text(LEFT - 8, y(Math.pow(10, e)) + 6, fmt(Math.pow(10, e)), "end");
      text(x(0), H - 8, "0", "start");
      text(x(norms.length - 1), H - 8, String(norms.length), "end");
      text((LEFT + W - RIGHT) / 2, H - 8, "step", "middle");
      const mid = (TOP + H - BOTTOM) / 2;
      text(18, mid, "grad norm", "middle", { transform: `rotate(-90 18 ${mid})` });

      this._readout.textContent = `threshold ${fmt(t)} clips ${s.clipped} of ${norms.length} steps (${(100 * s.share).toFixed(1)}%)`;
      this.dataset.threshold = String(t);
      this.dataset.clipped = String(s.clipped);
      this.dataset.share = String(s.share);
      this.dataset.meanScale = String(s.meanScale);
    }
  }

  customElements.define("clip-threshold", ClipThreshold);
})();
