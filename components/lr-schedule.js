// <lr-schedule>: the learning-rate schedule explorer (issue 14; deck 05).
//
// Attributes: peak (the peak learning rate), warmup (updates of linear warmup), steps (total updates),
// schedule ("constant", "cosine" or "wsd"), decay-frac (wsd: the fraction of the steps spent decaying),
// plus slidegen's alt, print-state ("step=N", also "schedule=wsd" and the like, separated by ";") and
// fallback. The curve is model.train.lr_at, step for step: LrSchedule.lrAt(step, cfg) is the pure
// computation, and tests/test_components.py holds it to the Python function within 1e-12.
// Plain ES2020, no imports, no network. Keys it uses do not reach reveal.js (stopPropagation).

(function () {
  "use strict";

  const SVG = "http://www.w3.org/2000/svg";
  const SCHEDULES = ["constant", "cosine", "wsd"];
  const W = 600, H = 170, LEFT = 92, RIGHT = 12, TOP = 14, BOTTOM = 34;

  // Python's round(): halves go to the even neighbour (round(2.5) == 2).
  function roundHalfEven(x) {
    const f = Math.floor(x), d = x - f;
    if (d > 0.5) return f + 1;
    if (d < 0.5) return f;
    return f % 2 === 0 ? f : f + 1;
  }

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

  class LrSchedule extends HTMLElement {
    static get observedAttributes() {
      return ["peak", "warmup", "steps", "schedule", "decay-frac", "print-state", "alt"];
    }

    // The learning rate of update `step` (0-based), exactly as model.train.lr_at computes it.
    // cfg: {peak, warmup, steps, schedule, decayFrac}.
    static lrAt(step, cfg) {
      if (step < cfg.warmup) return cfg.peak * (step + 1) / cfg.warmup;
      if (cfg.schedule === "constant") return cfg.peak;
      if (cfg.schedule === "cosine") {
        const progress = Math.min(1.0, (step - cfg.warmup) / Math.max(1, cfg.steps - cfg.warmup));
        return cfg.peak * 0.5 * (1.0 + Math.cos(Math.PI * progress));
      }
      const decaySteps = roundHalfEven(cfg.decayFrac * cfg.steps);  // wsd
      if (step < cfg.steps - decaySteps) return cfg.peak;
      return cfg.peak * Math.max(0.0, cfg.steps - step) / decaySteps;
    }

    // The whole curve: one learning rate per update 0 .. steps-1.
    static curve(cfg) {
      const out = [];
      for (let s = 0; s < cfg.steps; s++) out.push(LrSchedule.lrAt(s, cfg));
      return out;
    }

    constructor() {
      super();
      this._built = false;
      this._step = null;
    }

    // The configuration the attributes give (bad or missing values fall back to the default run's).
    config() {
      const schedule = (this.getAttribute("schedule") || "cosine").trim().toLowerCase();
      const steps = Math.max(1, Math.round(num(this.getAttribute("steps"), 2000)));
      return {
        peak: num(this.getAttribute("peak"), 2e-3),
        warmup: Math.max(0, Math.round(num(this.getAttribute("warmup"), 100))),
        steps: steps,
        schedule: SCHEDULES.includes(schedule) ? schedule : "cosine",
        decayFrac: Math.min(1, Math.max(0, num(this.getAttribute("decay-frac"), 0.2))),
      };
    }

    // print-state "step=1500; schedule=wsd": the state the static picture shows.
    printState() {
      const out = {};
      for (const part of (this.getAttribute("print-state") || "").split(";")) {
        const [k, v] = part.split("=").map((s) => (s || "").trim());
        if (k) out[k] = v;
      }
      return out;
    }

    connectedCallback() {
      if (!this._built) this._build();
      const state = this.printState();
      if (state.schedule && SCHEDULES.includes(state.schedule)) this.setAttribute("schedule", state.schedule);
      if (state.step !== undefined) this._step = Math.round(num(state.step, 0));
      this._render();
    }

    attributeChangedCallback(name) {
      if (!this._built) return;
      if (name === "print-state") {
        const state = this.printState();
        if (state.step !== undefined) this._step = Math.round(num(state.step, 0));
      }
      this._render();
    }

    _build() {
      this._built = true;
      this.classList.add("lr-schedule");
      if (!this.hasAttribute("role")) this.setAttribute("role", "group");
      if (this.getAttribute("alt")) this.setAttribute("aria-label", this.getAttribute("alt"));
      const controls = el("div", { class: "lr-controls" }, this);
      const field = (label, input) => {
        const wrap = el("label", { class: "lr-field" }, controls);
        el("span", {}, wrap).textContent = label;
        wrap.appendChild(input);
        return input;
      };
      this._schedule = field("schedule", el("select", { "aria-label": "schedule" }));
      for (const name of SCHEDULES) el("option", { value: name }, this._schedule).textContent = name;
      this._peak = field("peak", el("input", { type: "number", step: "any", min: "0", "aria-label": "peak learning rate" }));
      this._warmup = field("warmup", el("input", { type: "number", step: "1", min: "0", "aria-label": "warmup steps" }));
      this._decay = field("decay", el("input", { type: "number", step: "0.05", min: "0", max: "1", "aria-label": "decay fraction" }));
      const svg = el("svg:svg", { viewBox: `0 0 ${W} ${H}`, class: "lr-plot", role: "img", "aria-hidden": "true" }, this);
      this._axes = el("svg:g", { class: "lr-axes" }, svg);
      this._line = el("svg:polyline", { class: "lr-curve", fill: "none" }, svg);
      this._cursor = el("svg:line", { class: "lr-cursor" }, svg);
      this._dot = el("svg:circle", { class: "lr-dot", r: 5 }, svg);
      // the slider spans the plot's step axis exactly: the same margins, as shares of the plot's width
      const track = el("div", { class: "lr-track" }, this);
      track.style.paddingLeft = `${(100 * LEFT) / W}%`;
      track.style.paddingRight = `${(100 * RIGHT) / W}%`;
      this._slider = el("input", { type: "range", min: "0", step: "1", class: "lr-step", "aria-label": "step" }, track);
      this._readout = el("output", { class: "lr-readout", "aria-live": "polite" }, controls);  // beside the fields

      const set = (name, value) => this.setAttribute(name, value);
      this._schedule.addEventListener("change", () => set("schedule", this._schedule.value));
      this._peak.addEventListener("input", () => this._peak.value !== "" && set("peak", this._peak.value));
      this._warmup.addEventListener("input", () => this._warmup.value !== "" && set("warmup", this._warmup.value));
      this._decay.addEventListener("input", () => this._decay.value !== "" && set("decay-frac", this._decay.value));
      this._slider.addEventListener("input", () => { this._step = Number(this._slider.value); this._render(); });
      // keys typed into the controls belong to them, not to reveal.js (arrows would change the slide)
      this.addEventListener("keydown", (event) => event.stopPropagation());
    }

    _render() {
      const cfg = this.config();
      if (this._step === null) this._step = Math.floor(cfg.steps / 2);
      const step = Math.min(cfg.steps - 1, Math.max(0, this._step));
      const active = document.activeElement;
      if (active !== this._schedule) this._schedule.value = cfg.schedule;
      if (active !== this._peak) this._peak.value = String(cfg.peak);
      if (active !== this._warmup) this._warmup.value = String(cfg.warmup);
      if (active !== this._decay) this._decay.value = String(cfg.decayFrac);
      this._decay.disabled = cfg.schedule !== "wsd";
      this._slider.max = String(cfg.steps - 1);
      this._slider.value = String(step);

      const lr = LrSchedule.lrAt(step, cfg);
      const top = cfg.peak > 0 ? cfg.peak : 1;
      const x = (s) => LEFT + (W - LEFT - RIGHT) * (cfg.steps > 1 ? s / (cfg.steps - 1) : 0);
      const y = (v) => TOP + (H - TOP - BOTTOM) * (1 - v / top);
      const n = Math.min(cfg.steps, 1200);
      const points = [];
      for (let i = 0; i < n; i++) {
        const s = n === cfg.steps ? i : Math.round(i * (cfg.steps - 1) / (n - 1));
        points.push(`${x(s).toFixed(2)},${y(LrSchedule.lrAt(s, cfg)).toFixed(2)}`);
      }
      this._line.setAttribute("points", points.join(" "));
      this._cursor.setAttribute("x1", x(step)); this._cursor.setAttribute("x2", x(step));
      this._cursor.setAttribute("y1", TOP); this._cursor.setAttribute("y2", H - BOTTOM);
      this._dot.setAttribute("cx", x(step)); this._dot.setAttribute("cy", y(lr));

      this._axes.textContent = "";
      el("svg:line", { x1: LEFT, y1: H - BOTTOM, x2: W - RIGHT, y2: H - BOTTOM, class: "lr-axis" }, this._axes);
      el("svg:line", { x1: LEFT, y1: TOP, x2: LEFT, y2: H - BOTTOM, class: "lr-axis" }, this._axes);
      const label = (tx, ty, text, anchor) => {
        const t = el("svg:text", { x: tx, y: ty, "text-anchor": anchor, class: "lr-tick" }, this._axes);
        t.textContent = text;
      };
      label(LEFT - 8, y(top) + 5, fmt(cfg.peak), "end");
      label(LEFT - 8, y(0) + 5, "0", "end");
      label(x(0), H - 10, "0", "start");
      label(x(cfg.steps - 1), H - 10, String(cfg.steps), "end");
      label((LEFT + W - RIGHT) / 2, H - 10, "step", "middle");
      const mid = (TOP + H - BOTTOM) / 2;  // the y axis named along it, as the figures name theirs
      el("svg:text", { x: 20, y: mid, "text-anchor": "middle", class: "lr-tick",
                       transform: `rotate(-90 20 ${mid})` }, this._axes).textContent = "learning rate";

      this._readout.textContent = `step ${step}: learning rate ${fmt(lr)}`;
      this.dataset.step = String(step);
      this.dataset.lr = String(lr);
    }
  }

  customElements.define("lr-schedule", LrSchedule);
})();
