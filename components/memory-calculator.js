// <memory-calculator>: training memory per device as a stacked bar (issue 39; deck 09).
//
// Attributes (defaults: LLaMA-7B, one 2,048-token sequence, mixed precision, Adam): layers, hidden, heads,
// seq, batch, vocab, ffn (the feed-forward's hidden width), mlp ("swiglu" or "gelu"), dropout
// ("true"/"false"), norm-gains ("true"/"false"), precision ("mixed" or "fp32"), optimiser ("adam",
// "momentum", "sgd"), checkpointing ("none", "selective", "full"), dp (data-parallel ranks), zero (ZeRO
// stage 0-3); plus slidegen's alt, print-state ("checkpointing=full; zero=3", separated by ";": the state
// the PowerPoint picture shows) and fallback.
// MemoryCalculator.compute(cfg) is the pure computation: model/memory.py's training_memory, term for
// term; tests/test_components_memory_calculator.py holds the two equal on a grid of inputs.
// Plain ES2020, no imports, no network. Keys typed into the controls do not reach reveal.js.

(function () {
  "use strict";

  const SVG = "http://www.w3.org/2000/svg";
  const CHOICES = {
    mlp: ["swiglu", "gelu"], precision: ["mixed", "fp32"], optimiser: ["adam", "momentum", "sgd"],
    checkpointing: ["none", "selective", "full"], zero: ["0", "1", "2", "3"],
  };
  const NUMBERS = {  // attribute: [default, minimum]
    layers: [32, 1], hidden: [4096, 1], heads: [32, 1], seq: [2048, 1], batch: [1, 1], vocab: [32000, 1], dp: [1, 1],
    ffn: [11008, 1],
  };
  const PARTS = [  // key, label, colour index, hatch
    ["params", "weights", 0, "none"], ["grads", "gradients", 1, "diag"],
    ["optimiser", "optimiser states", 2, "dots"], ["activations", "activations", 3, "cross"],
  ];
  const W = 230, H = 420, LEFT = 86, TOP = 14, BOTTOM = 14, BAR = 110;

  function el(tag, attrs, parent) {
    const node = tag.startsWith("svg:") ? document.createElementNS(SVG, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (parent) parent.appendChild(node);
    return node;
  }

  function int(value, fallback, min) {
    const x = Number(value);
    if (value === null || value === "" || !Number.isFinite(x)) return fallback;
    return Math.max(min, Math.round(x));
  }

  function gb(bytes) {
    const x = bytes / 1e9;
    if (x === 0) return "0";
    if (x >= 100) return x.toFixed(0);
    if (x >= 0.01) return String(Number(x.toPrecision(3)));
    return x.toExponential(1);
  }

  // A "nice" tick step (1, 2 or 5 times a power of ten) giving about `n` ticks up to `top`.
  function tickStep(top, n) {
    const raw = top / n, p = Math.pow(10, Math.floor(Math.log10(raw)));
    for (const m of [1, 2, 5, 10]) if (m * p >= raw) return m * p;
    return 10 * p;
  }

  class MemoryCalculator extends HTMLElement {
    static get observedAttributes() {
      return ["layers", "hidden", "heads", "seq", "batch", "vocab", "ffn", "mlp", "dropout", "norm-gains",
              "precision", "optimiser", "checkpointing", "dp", "zero", "print-state", "alt"];
    }

    // model/memory.py's parameters(): attention 4h^2, 2 or 3 h x f matrices, gains, untied embedding and head.
    static parameters(c) {
      const mats = c.mlp === "gelu" ? 2 : 3;
      const gains = c.normGains ? c.hidden : 0;
      const perLayer = 4 * c.hidden * c.hidden + mats * c.hidden * c.ffn + 2 * gains;
      return c.layers * perLayer + gains + 2 * c.vocab * c.hidden;
    }

    // model/memory.py's state_bytes_per_param(): [weights, gradients, optimiser states] per parameter.
    static stateBytes(precision, optimiser) {
      const moments = { adam: 2, momentum: 1, sgd: 0 }[optimiser];
      return precision === "mixed" ? [2, 2, 4 + 4 * moments] : [4, 4, 4 * moments];
    }

    // model/memory.py's layer_activation_bytes(): one layer's bytes kept for the backward pass.
    static layerBytes(c) {
      const s = c.seq, b = c.batch, h = c.hidden, a = c.heads, t = c.tp || 1;
      const v = c.precision === "mixed" ? 2 : 4;
      if (c.checkpointing === "full") return v * s * b * h;
      const r = c.ffn / h, mask = c.dropout ? 1 : 0;
      const attn = [5 * v + mask, v + (1 + v) * mask];
      const mlp = [v + (c.mlp === "gelu" ? 2 : 3) * r * v + mask, 0.0];
      const norms = [2 * v, 0.0];
      const sbh = attn[0] + mlp[0] + norms[0];
      const as2b = c.checkpointing === "selective" ? 0.0 : attn[1] + mlp[1] + norms[1];
      const whole = c.sp ? 0 : 2 * v + v + v + 2 * mask;
      return s * b * h * (whole + (sbh - whole) / t) + a * s * s * b * as2b / t;
    }

    // model/memory.py's training_memory(): bytes per device by part, and the activations as the published
    // formula assumes the shape (GELU MLP of width 4h, dropout) beside them.
    static compute(c) {
      const n = MemoryCalculator.parameters(c);
      const [w, g, k] = MemoryCalculator.stateBytes(c.precision, c.optimiser);
      const nd = c.dp;
      const out = {
        params: w * n / (c.zero >= 3 ? nd : 1),
        grads: g * n / (c.zero >= 2 ? nd : 1),
        optimiser: k * n / (c.zero >= 1 ? nd : 1),
        activations: c.layers * MemoryCalculator.layerBytes(c),
        nParams: n,
      };
      const formula = Object.assign({}, c, { ffn: 4 * c.hidden, mlp: "gelu", dropout: true });
      out.formulaActivations = c.layers * MemoryCalculator.layerBytes(formula);
      out.total = out.params + out.grads + out.optimiser + out.activations;
      return out;
    }

    constructor() {
      super();
      this._built = false;
    }

    // print-state "checkpointing=full; zero=3": values the static picture shows instead of the attributes.
    printState() {
      const out = {};
      for (const part of (this.getAttribute("print-state") || "").split(";")) {
        const [k, v] = part.split("=").map((s) => (s || "").trim());
        if (k) out[k] = v;
      }
      return out;
    }

    _get(name) {
      return this.getAttribute(name);
    }

    // The configuration the attributes give (a bad or missing value falls back to LLaMA-7B's).
    config() {
      const c = {};
      for (const [name, [fallback, min]] of Object.entries(NUMBERS)) c[name] = int(this._get(name), fallback, min);
      const pick = (name, fallback) => {
        const v = (this._get(name) || "").trim().toLowerCase();
        return CHOICES[name].includes(v) ? v : fallback;
      };
      c.mlp = pick("mlp", "swiglu");
      c.precision = pick("precision", "mixed");
      c.optimiser = pick("optimiser", "adam");
      c.checkpointing = pick("checkpointing", "none");
      c.zero = Number(pick("zero", "0"));
      c.dropout = (this._get("dropout") || "false").trim().toLowerCase() === "true";
      c.normGains = (this._get("norm-gains") || "true").trim().toLowerCase() !== "false";
      return c;
    }

    connectedCallback() {
      if (!this._built) this._build();
      const state = this.printState();
      for (const [k, v] of Object.entries(state)) if (MemoryCalculator.observedAttributes.includes(k)) this.setAttribute(k, v);
      this._render();
    }

    attributeChangedCallback() {
      if (this._built) this._render();
    }

    _build() {
      this._built = true;
      this.classList.add("memory-calculator");
      if (!this.hasAttribute("role")) this.setAttribute("role", "group");
      if (this.getAttribute("alt")) this.setAttribute("aria-label", this.getAttribute("alt"));
      const controls = el("div", { class: "mc-controls" }, this);
      this._inputs = {};
      const field = (name, label, input) => {
        const wrap = el("label", { class: "mc-field" }, controls);
        el("span", {}, wrap).textContent = label;
        wrap.appendChild(input);
        this._inputs[name] = input;
        const commit = () => {
          const value = input.type === "checkbox" ? String(input.checked) : input.value;
          if (value !== "") this.setAttribute(name, value);
        };
        input.addEventListener(input.tagName === "SELECT" || input.type === "checkbox" ? "change" : "input", commit);
      };
      const number = (name, label) =>
        field(name, label, el("input", { type: "number", min: "1", step: "1", "aria-label": label }));
      const select = (name, label, options) => {
        const s = el("select", { "aria-label": label });
        for (const [value, text] of options) el("option", { value }, s).textContent = text;
        field(name, label, s);
      };
      number("layers", "layers");
      number("hidden", "hidden");
      number("heads", "heads");
      number("ffn", "FFN");
      number("seq", "sequence");
      number("batch", "micro-batch");
      number("vocab", "vocabulary");
      select("mlp", "MLP", [["swiglu", "SwiGLU"], ["gelu", "GELU"]]);
      field("dropout", "dropout", el("input", { type: "checkbox", "aria-label": "dropout" }));
      select("precision", "precision", [["mixed", "mixed"], ["fp32", "fp32"]]);
      select("optimiser", "optimiser", [["adam", "Adam"], ["momentum", "momentum"], ["sgd", "SGD"]]);
      select("checkpointing", "recompute", [["none", "none"], ["selective", "selective"], ["full", "full"]]);
      number("dp", "DP ranks");
      select("zero", "ZeRO", [["0", "0"], ["1", "1"], ["2", "2"], ["3", "3"]]);

      const right = el("div", { class: "mc-chart" }, this);
      const svg = el("svg:svg", { viewBox: `0 0 ${W} ${H}`, class: "mc-plot", role: "img", "aria-hidden": "true" }, right);
      const defs = el("svg:defs", {}, svg);
      const hatch = (id, d) => {
        const p = el("svg:pattern", { id, width: 10, height: 10, patternUnits: "userSpaceOnUse" }, defs);
        el("svg:path", { d, class: "mc-hatch" }, p);
      };
      this._uid = "mc" + Math.random().toString(36).slice(2, 8);
      hatch(`${this._uid}-diag`, "M0,10 L10,0");
      hatch(`${this._uid}-dots`, "M4,5 a1,1 0 1,0 2,0 a1,1 0 1,0 -2,0");
      hatch(`${this._uid}-cross`, "M0,0 L10,10 M10,0 L0,10");
      this._svg = el("svg:g", {}, svg);
      this._legend = el("div", { class: "mc-legend" }, right);
      this._readout = el("output", { class: "mc-readout", "aria-live": "polite" }, this);
      this.addEventListener("keydown", (event) => event.stopPropagation());
    }

    _render() {
      const c = this.config();
      const r = MemoryCalculator.compute(c);
      const active = document.activeElement;
      for (const [name, input] of Object.entries(this._inputs)) {
        if (input === active) continue;
        if (name === "dropout") input.checked = c.dropout;
        else input.value = String(c[name]);
      }
      this._inputs.zero.disabled = c.dp === 1;

      const g = this._svg;
      g.textContent = "";
      const top = r.total > 0 ? r.total : 1;
      const step = tickStep(top / 1e9, 4) * 1e9;
      const scaleTop = Math.ceil(top / step - 1e-9) * step;
      const y = (bytes) => TOP + (H - TOP - BOTTOM) * (1 - bytes / scaleTop);
      for (let t = 0; t <= scaleTop + 1; t += step) {
        el("svg:line", { x1: LEFT - 6, x2: LEFT + BAR + 26, y1: y(t), y2: y(t), class: t === 0 ? "mc-axis" : "mc-grid" }, g);
        el("svg:text", { x: LEFT - 10, y: y(t) + 8, "text-anchor": "end", class: "mc-tick" }, g).textContent = gb(t);
      }
      const mid = (TOP + H - BOTTOM) / 2;
      el("svg:text", { x: 20, y: mid, "text-anchor": "middle", class: "mc-tick", transform: `rotate(-90 20 ${mid})` },
         g).textContent = "GB per device";
      let base = 0;
      this._legend.textContent = "";
      for (const [key, label, colour, pattern] of PARTS) {
        const bytes = r[key];
        const x = LEFT + 12;
        const rect = { x, width: BAR, y: y(base + bytes), height: Math.max(0, y(base) - y(base + bytes)) };
        el("svg:rect", Object.assign({ class: `mc-seg mc-${key}`, style: `fill: var(--series-${colour})` }, rect), g);
        if (pattern !== "none") el("svg:rect", Object.assign({ class: "mc-pattern", fill: `url(#${this._uid}-${pattern})` }, rect), g);
        base += bytes;
        const row = el("div", { class: "mc-row" }, this._legend);
        el("span", { class: `mc-swatch mc-swatch-${pattern}`, style: `background-color: var(--series-${colour})` }, row);
        el("span", { class: "mc-label" }, row).textContent = label;
        el("span", { class: "mc-value" }, row).textContent = `${gb(bytes)} GB`;
      }
      const total = el("div", { class: "mc-row mc-total" }, this._legend);
      el("span", { class: "mc-label" }, total).textContent = "total";
      el("span", { class: "mc-value" }, total).textContent = `${gb(r.total)} GB`;
      const formula = el("div", { class: "mc-row mc-formula" }, this._legend);
      el("span", { class: "mc-label" }, formula).textContent = "activations if GELU 4h + dropout";
      el("span", { class: "mc-value" }, formula).textContent = `${gb(r.formulaActivations)} GB`;

      this._readout.textContent = `${(r.nParams / 1e9).toPrecision(3)}B parameters: ${gb(r.total)} GB per device`;
      this.dataset.total = String(r.total);
      this.dataset.activations = String(r.activations);
    }
  }

  customElements.define("memory-calculator", MemoryCalculator);
})();
