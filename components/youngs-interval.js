// <youngs-interval>: goodput against the checkpoint interval under random failures (issue 43; deck 13).
//
// Attributes: mtbf (M, hours between failures), delta (δ, minutes to save a checkpoint), restart (R, minutes
// from a failure until the job computes again), work (hours of useful work the simulated job needs), seed
// (the failures' generator), plus slidegen's alt, print-state (unused: the picture is the initial state)
// and fallback. The curve is model/goodput.py's, number for number: YoungsInterval.simulate, goodputCurve,
// expectedGoodput and bestInterval are the pure computations, and tests/test_components_youngs_interval.py
// holds them to the Python functions within 1e-12. Plain ES2020, no imports, no network. Keys typed into
// the fields do not reach reveal.js (stopPropagation).

(function () {
  "use strict";

  const SVG = "http://www.w3.org/2000/svg";
  const W = 600, H = 250, LEFT = 92, RIGHT = 14, TOP = 14, BOTTOM = 40;
  const POINTS = 41;  // τ values on the curve, log-spaced from τ_Young / 10 to τ_Young * 10

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
    return String(Number(x.toPrecision(3)));
  }

  // mulberry32, as model.goodput.Mulberry32: 32 random bits per draw, the state an unsigned 32-bit integer.
  function generator(seed) {
    let state = seed >>> 0;
    const uniform = () => {
      state = (state + 0x6d2b79f5) >>> 0;
      let t = state;
      t = Math.imul(t ^ (t >>> 15), t | 1) >>> 0;
      t = (t ^ ((t + Math.imul(t ^ (t >>> 7), t | 61)) >>> 0)) >>> 0;
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
    return { uniform, exponential: (mean) => -mean * Math.log(1 - uniform()) };
  }

  class YoungsInterval extends HTMLElement {
    static get observedAttributes() {
      return ["mtbf", "delta", "restart", "work", "seed", "alt"];
    }

    // job: {mtbf, delta, restart, work} in hours. As model.goodput.simulate.
    static simulate(job, tau, seed) {
      const rng = generator(seed);
      let t = 0, done = 0, failures = 0, lost = 0, saving = 0, restarting = 0;
      let left = rng.exponential(job.mtbf);
      while (done < job.work) {
        const segment = Math.min(tau, job.work - done);
        const need = segment + job.delta;
        if (need <= left) {
          t += need; left -= need; done += segment; saving += job.delta;
        } else {
          t += left + job.restart; lost += left; restarting += job.restart; failures += 1;
          left = rng.exponential(job.mtbf);
        }
      }
      return { elapsed: t, failures, lost, saving, restarting };
    }

    static goodputCurve(job, taus, seed) {
      return taus.map((tau) => job.work / YoungsInterval.simulate(job, tau, seed).elapsed);
    }

    static expectedGoodput(job, tau) {
      return tau / ((job.mtbf + job.restart) * Math.expm1((tau + job.delta) / job.mtbf));
    }

    static youngInterval(delta, mtbf) {
      return Math.sqrt(2.0 * delta * mtbf);
    }

    // Golden-section search for the τ of the highest expected goodput, as model.goodput.best_interval.
    static bestInterval(job, iters = 200) {
      let a = 1e-6 * job.mtbf, b = 10.0 * job.mtbf;
      const g = (Math.sqrt(5.0) - 1.0) / 2.0;
      const f = (tau) => YoungsInterval.expectedGoodput(job, tau);
      let c = b - g * (b - a), d = a + g * (b - a), fc = f(c), fd = f(d);
      for (let i = 0; i < iters; i++) {
        if (fc > fd) { b = d; d = c; fd = fc; c = b - g * (b - a); fc = f(c); }
        else { a = c; c = d; fc = fd; d = a + g * (b - a); fd = f(d); }
      }
      return (a + b) / 2.0;
    }

    static logGrid(lo, hi, n) {
      const out = [];
      for (let i = 0; i < n; i++) out.push(lo * (hi / lo) ** (i / (n - 1)));
      return out;
    }

    // The job the attributes give, in hours (bad or missing values fall back to the deck's preset).
    job() {
      return {
        mtbf: Math.max(1e-3, num(this.getAttribute("mtbf"), 3.1)),
        delta: Math.max(1e-3, num(this.getAttribute("delta"), 1)) / 60,
        restart: Math.max(0, num(this.getAttribute("restart"), 10)) / 60,
        work: Math.max(1, num(this.getAttribute("work"), 1000)),
      };
    }

    seed() {
      return Math.round(num(this.getAttribute("seed"), 0));
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
      this.classList.add("youngs-interval");
      if (!this.hasAttribute("role")) this.setAttribute("role", "group");
      if (this.getAttribute("alt")) this.setAttribute("aria-label", this.getAttribute("alt"));
      const controls = el("div", { class: "yi-controls" }, this);
      const field = (label, name, step) => {
        const wrap = el("label", { class: "yi-field" }, controls);
        el("span", {}, wrap).textContent = label;
        const input = el("input", { type: "number", step, min: "0", "aria-label": label }, wrap);
        input.addEventListener("input", () => input.value !== "" && Number(input.value) > 0 && this.setAttribute(name, input.value));
        return input;
      };
      this._mtbf = field("M (h)", "mtbf", "0.1");
      this._delta = field("δ (min)", "delta", "0.5");
      this._restart = field("R (min)", "restart", "1");
      const svg = el("svg:svg", { viewBox: `0 0 ${W} ${H}`, class: "yi-plot", role: "img", "aria-hidden": "true" }, this);
      this._axes = el("svg:g", { class: "yi-axes" }, svg);
      this._young = el("svg:line", { class: "yi-young" }, svg);
      this._expected = el("svg:polyline", { class: "yi-expected", fill: "none" }, svg);
      this._sim = el("svg:g", { class: "yi-sim" }, svg);
      this._readout = el("div", { class: "yi-readout", "aria-live": "polite" }, this);
      this.addEventListener("keydown", (event) => event.stopPropagation());
    }

    _render() {
      const job = this.job();
      const active = document.activeElement;
      if (active !== this._mtbf) this._mtbf.value = String(job.mtbf);
      if (active !== this._delta) this._delta.value = String(Number((job.delta * 60).toPrecision(6)));
      if (active !== this._restart) this._restart.value = String(Number((job.restart * 60).toPrecision(6)));
      const young = YoungsInterval.youngInterval(job.delta, job.mtbf);
      const taus = YoungsInterval.logGrid(young / 10, young * 10, POINTS);
      const sim = YoungsInterval.goodputCurve(job, taus, this.seed());
      const expected = taus.map((tau) => YoungsInterval.expectedGoodput(job, tau));
      const best = YoungsInterval.bestInterval(job);
      const lo = Math.max(0, Math.floor(Math.min(...sim, ...expected) * 10) / 10);
      const x = (tau) => LEFT + (W - LEFT - RIGHT) * Math.log(tau / taus[0]) / Math.log(taus[POINTS - 1] / taus[0]);
      const y = (g) => TOP + (H - TOP - BOTTOM) * (1 - (g - lo) / (1 - lo));

      this._expected.setAttribute("points", taus.map((tau, i) => `${x(tau).toFixed(2)},${y(expected[i]).toFixed(2)}`).join(" "));
      this._sim.textContent = "";
      taus.forEach((tau, i) => el("svg:circle", { cx: x(tau).toFixed(2), cy: y(sim[i]).toFixed(2), r: 4.5, class: "yi-dot" }, this._sim));
      this._young.setAttribute("x1", x(young)); this._young.setAttribute("x2", x(young));
      this._young.setAttribute("y1", TOP); this._young.setAttribute("y2", H - BOTTOM);

      this._axes.textContent = "";
      el("svg:line", { x1: LEFT, y1: H - BOTTOM, x2: W - RIGHT, y2: H - BOTTOM, class: "yi-axis" }, this._axes);
      el("svg:line", { x1: LEFT, y1: TOP, x2: LEFT, y2: H - BOTTOM, class: "yi-axis" }, this._axes);
      const label = (tx, ty, text, anchor) => {
        el("svg:text", { x: tx, y: ty, "text-anchor": anchor, class: "yi-tick" }, this._axes).textContent = text;
      };
      const minutes = (tau) => `${fmt(tau * 60)} min`;
      label(LEFT - 8, y(1) + 6, "1", "end");
      label(LEFT - 8, y(lo) + 6, fmt(lo), "end");
      label(x(taus[0]), H - 12, minutes(taus[0]), "start");
      label(x(taus[POINTS - 1]), H - 12, minutes(taus[POINTS - 1]), "end");
      label((x(young) + x(taus[POINTS - 1])) / 2, H - 12, "τ (log)", "middle");
      label(x(young), H - 12, "√(2δM)", "middle");
      // the legend, top right: dots simulated (this seed), the line expected
      const lx = W - RIGHT - 150;
      el("svg:circle", { cx: lx, cy: TOP + 12, r: 4.5, class: "yi-key" }, this._axes);
      label(lx + 12, TOP + 18, "simulated", "start");
      el("svg:line", { x1: lx - 8, y1: TOP + 38, x2: lx + 8, y2: TOP + 38, class: "yi-expected" }, this._axes);
      label(lx + 12, TOP + 44, "expected", "start");
      const mid = (TOP + H - BOTTOM) / 2;
      el("svg:text", { x: 20, y: mid, "text-anchor": "middle", class: "yi-tick",
                       transform: `rotate(-90 20 ${mid})` }, this._axes).textContent = "goodput";

      const iYoung = (POINTS - 1) / 2;  // the grid's middle point is τ_Young exactly (up to rounding)
      this._readout.textContent =
        `√(2δM) = ${minutes(young)}: goodput ${fmt(sim[iYoung])} simulated, ${fmt(expected[iYoung])} expected; ` +
        `best expected τ ${minutes(best)}`;
      this.dataset.young = String(young);
      this.dataset.best = String(best);
      this.dataset.goodput = String(sim[iYoung]);
    }
  }

  customElements.define("youngs-interval", YoungsInterval);
})();
