// <ring-allreduce>: the ring all-reduce, stepped chunk by chunk (issue 40; deck 10).
//
// Attributes: workers (p, 2-8), elements (n, p-64), step (0 .. 2(p-1): how many steps are done), plus
// slidegen's alt, print-state ("workers=4; elements=8; step=3", separated by ";": the state the static
// picture shows) and fallback. RingAllreduce.run(p, n) is model/ring.py's ring_allreduce, step for step:
// tests/test_components_ring_allreduce.py holds its chunks, bytes sent and vectors to the Python's.
// Plain ES2020, no imports, no network. Keys it uses do not reach reveal.js (stopPropagation).

(function () {
  "use strict";

  const SVG = "http://www.w3.org/2000/svg";
  const W = 640, LEFT = 104, RIGHT = 112, TOP = 6, GAP = 6, AXIS = 34;
  const MAX_P = 8, MAX_N = 64, BYTES = 4;  // float32

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

  class RingAllreduce extends HTMLElement {
    static get observedAttributes() {
      return ["workers", "elements", "step", "print-state", "alt"];
    }

    // [start, end) of each of the p chunks of an n-vector (model.ring.chunk_bounds).
    static bounds(n, p) {
      const base = Math.floor(n / p), extra = n % p, out = [];
      let start = 0;
      for (let c = 0; c < p; c++) {
        const size = base + (c < extra ? 1 : 0);
        out.push([start, start + size]);
        start += size;
      }
      return out;
    }

    // Every step of the ring on model.ring.initial_vectors(p, n): [{phase, transfers: [[src, dst, chunk,
    // elements]], sent: elements sent per worker so far, vectors, held: workers' shares in each chunk}].
    static run(p, n) {
      const bounds = RingAllreduce.bounds(n, p);
      const state = [], held = [];
      for (let w = 0; w < p; w++) {
        state.push(Array.from({ length: n }, (_, j) => (w + 1) * (j + 1)));
        held.push(Array.from({ length: p }, () => 1));
      }
      const sent = new Array(p).fill(0), steps = [];
      for (const phase of ["reduce-scatter", "all-gather"]) {
        for (let s = 0; s < p - 1; s++) {
          const transfers = [], outgoing = [];
          for (let w = 0; w < p; w++) {
            const c = phase === "reduce-scatter" ? (((w - s) % p) + p) % p : (((w + 1 - s) % p) + p) % p;
            const [lo, hi] = bounds[c];
            transfers.push([w, (w + 1) % p, c, hi - lo]);
            outgoing.push([state[w].slice(lo, hi), held[w][c]]);
          }
          transfers.forEach(([src, dst, c, size], i) => {
            const [lo] = bounds[c], [data, shares] = outgoing[i];
            for (let k = 0; k < data.length; k++) state[dst][lo + k] = phase === "reduce-scatter" ? state[dst][lo + k] + data[k] : data[k];
            held[dst][c] = phase === "reduce-scatter" ? held[dst][c] + shares : shares;
            sent[src] += size;
          });
          steps.push({ phase, transfers, sent: sent.slice(), vectors: state.map((v) => v.slice()),
                       held: held.map((h) => h.slice()) });
        }
      }
      return { bounds, steps };
    }

    constructor() {
      super();
      this._built = false;
    }

    // The configuration the attributes give (bad or missing values fall back to the deck's default).
    config() {
      const p = clampInt(this.getAttribute("workers"), 2, MAX_P, 4);
      const n = clampInt(this.getAttribute("elements"), p, MAX_N, Math.max(p, 8));
      return { p, n, step: clampInt(this.getAttribute("step"), 0, 2 * (p - 1), 0) };
    }

    _applyPrintState() {
      const names = { workers: "workers", p: "workers", elements: "elements", n: "elements", step: "step" };
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

    go(delta) {
      const cfg = this.config();
      this.setAttribute("step", String(Math.min(2 * (cfg.p - 1), Math.max(0, cfg.step + delta))));
    }

    _build() {
      this._built = true;
      this.classList.add("ring-allreduce");
      if (!this.hasAttribute("role")) this.setAttribute("role", "group");
      if (this.getAttribute("alt")) this.setAttribute("aria-label", this.getAttribute("alt"));
      const controls = el("div", { class: "ra-controls" }, this);
      const field = (label, input) => {
        const wrap = el("label", { class: "ra-field" }, controls);
        el("span", {}, wrap).textContent = label;
        wrap.appendChild(input);
        return input;
      };
      this._p = field("p", el("input", { type: "number", min: "2", max: String(MAX_P), step: "1", "aria-label": "workers p" }));
      this._n = field("n", el("input", { type: "number", min: "2", max: String(MAX_N), step: "1", "aria-label": "elements n" }));
      const button = (text, label, delta) => {
        const b = el("button", { type: "button", "aria-label": label }, controls);
        b.textContent = text;
        b.addEventListener("click", () => (delta === null ? this.setAttribute("step", "0") : this.go(delta)));
        return b;
      };
      this._reset = button("start", "back to the start", null);
      this._back = button("◀", "one step back", -1);
      this._next = button("▶", "one step on", 1);
      this._svg = el("svg:svg", { class: "ra-plot", role: "img", "aria-hidden": "true" }, this);
      this._readout = el("output", { class: "ra-readout", "aria-live": "polite" }, this);
      const set = (name, input) => input.value !== "" && this.setAttribute(name, input.value);
      this._p.addEventListener("input", () => set("workers", this._p));
      this._n.addEventListener("input", () => set("elements", this._n));
      // arrows step the ring when a button has focus; every key pressed here stays away from reveal.js
      this.addEventListener("keydown", (event) => {
        const inField = event.target instanceof HTMLInputElement;
        if (!inField && (event.key === "ArrowRight" || event.key === "ArrowLeft")) {
          this.go(event.key === "ArrowRight" ? 1 : -1);
          event.preventDefault();
        }
        event.stopPropagation();
      });
    }

    _render() {
      const cfg = this.config(), { p, n, step } = cfg;
      const active = document.activeElement;
      if (active !== this._p) this._p.value = String(p);
      if (active !== this._n) this._n.value = String(n);
      this._back.disabled = step === 0;
      this._reset.disabled = step === 0;
      this._next.disabled = step === 2 * (p - 1);
      const { bounds, steps } = RingAllreduce.run(p, n);
      const now = step ? steps[step - 1] : null, upcoming = steps[step] || null;
      const held = now ? now.held : Array.from({ length: p }, () => new Array(p).fill(1));
      const sent = now ? now.sent : new Array(p).fill(0);
      const ROW = p > 5 ? 38 : 48, H = TOP + p * ROW + AXIS, cw = (W - LEFT - RIGHT) / p;
      const svg = this._svg;
      svg.textContent = "";
      svg.setAttribute("viewBox", `0 0 ${W} ${H}`);
      const sends = new Map((upcoming ? upcoming.transfers : []).map(([src, , c]) => [`${src},${c}`, true]));
      for (let w = 0; w < p; w++) {
        const y = TOP + w * ROW;
        el("svg:text", { x: LEFT - 8, y: y + ROW / 2 + 7, "text-anchor": "end", class: "ra-tick" }, svg).textContent = `worker ${w + 1}`;
        for (let c = 0; c < p; c++) {
          const share = held[w][c] / p, full = held[w][c] === p;
          const cls = `ra-cell${full ? " ra-full" : ""}${sends.has(`${w},${c}`) ? " ra-send" : ""}`;
          el("svg:rect", { x: LEFT + c * cw + 2, y: y + GAP / 2, width: cw - 4, height: ROW - GAP, class: cls,
                           "fill-opacity": full ? 1 : 0.15 + 0.6 * share }, svg);
          if (cw >= 52) {
            el("svg:text", { x: LEFT + (c + 0.5) * cw, y: y + ROW / 2 + 7, "text-anchor": "middle",
                             class: `ra-label${full ? " ra-label-full" : ""}` }, svg).textContent = `${held[w][c]}/${p}`;
          }
        }
        el("svg:text", { x: W - 4, y: y + ROW / 2 + 7, "text-anchor": "end", class: "ra-tick ra-sent" }, svg).textContent =
          `${sent[w] * BYTES} B`;
      }
      const axisY = TOP + p * ROW + 26;
      for (let c = 0; c < p; c++) {
        el("svg:text", { x: LEFT + (c + 0.5) * cw, y: axisY, "text-anchor": "middle", class: "ra-tick" }, svg).textContent =
          cw >= 56 ? `chunk ${c + 1}` : String(c + 1);
      }
      el("svg:text", { x: W - 4, y: axisY, "text-anchor": "end", class: "ra-tick" }, svg).textContent = "sent";
      const total = 2 * (p - 1) * n * BYTES / p;
      const phase = step === 0 ? "start" : now.phase;
      const chunkBytes = bounds.map(([lo, hi]) => (hi - lo) * BYTES);
      this._readout.textContent = `step ${step} of ${2 * (p - 1)} (${phase}) · worker 1 sent ${sent[0] * BYTES} B; ` +
        `when done 2(p−1)/p·n = ${Number(total.toFixed(2))} B`;
      this.dataset.step = String(step);
      this.dataset.sent = JSON.stringify(sent.map((s) => s * BYTES));
      this.dataset.chunkBytes = JSON.stringify(chunkBytes);
      this.dataset.done = String(step === 2 * (p - 1));
    }
  }

  customElements.define("ring-allreduce", RingAllreduce);
})();
