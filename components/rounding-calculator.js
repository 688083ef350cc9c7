// <rounding-calculator>: one number rounded to six floating-point formats (issue 38; deck 08).
//
// Type a value or drag the slider (log scale); each row shows the value's bits in that format (sign,
// exponent, mantissa), the value it rounds to and the relative error, and says when the value is
// subnormal, flushed to zero, past the format's maximum (inf) or saturated (E4M3 has no inf: torch's
// cast clamps to ±448).
// Attributes: value (default 0.1), print-state ("value=70000": what the PowerPoint picture shows), alt.
// RoundingCalculator.cast(x, name) is the pure computation: model/formats.py's cast(), term for term
// (first FP32, as torch.tensor(x) does, then the format, round to nearest, ties to even);
// tests/test_components_rounding_calculator.py holds it against torch's casts on thousands of values.
// Plain ES2020, no imports, no network. Keys typed into the controls do not reach reveal.js.

(function () {
  "use strict";

  // name, exponent bits, mantissa bits, IEEE-like (the top exponent code is inf/NaN) or E4M3's finite "fn" layout
  const LAYOUTS = [["FP32", 8, 23, true], ["TF32", 8, 10, true], ["BF16", 8, 7, true], ["FP16", 5, 10, true],
                   ["E4M3", 4, 3, false], ["E5M2", 5, 2, true]];
  const LOG_MIN = -30, LOG_MAX = 18;  // the slider's range of log2 |x|

  function layout(name, e, m, ieee) {
    const bias = 2 ** (e - 1) - 1;
    const top = 2 ** e - 1;
    const emax = (ieee ? top - 1 : top) - bias;
    const max = (2 - 2 ** -(ieee ? m : m - 1)) * 2 ** emax;
    return { name, e, m, ieee, bias, emin: 1 - bias, emax, max, minNormal: 2 ** (1 - bias), minSub: 2 ** (1 - bias - m) };
  }
  const FORMATS = LAYOUTS.map((f) => layout(...f));
  const BY_NAME = Object.fromEntries(FORMATS.map((f) => [f.name, f]));

  // floor(log2 a) for a finite a > 0, exact (Math.log2 may be off by one near powers of two).
  function exponentOf(a) {
    let e = Math.floor(Math.log2(a));
    if (2 ** e > a) e -= 1;
    else if (2 ** (e + 1) <= a) e += 1;
    return e;
  }

  // v rounded to an integer, halves to the even neighbour.
  function rintEven(v) {
    const f = Math.floor(v), d = v - f;
    if (d > 0.5) return f + 1;
    if (d < 0.5) return f;
    return f % 2 === 0 ? f : f + 1;
  }

  // model/formats.py's round_to: x to the nearest value of f, ties to even; past f.max inf (E4M3: ±max).
  function roundTo(x, f) {
    if (Number.isNaN(x)) return NaN;
    const sign = x < 0 || Object.is(x, -0) ? -1 : 1;
    const a = Math.abs(x);
    if (a === Infinity) return sign * (f.ieee ? Infinity : f.max);
    if (a === 0) return sign * 0;
    const quantum = 2 ** (Math.max(exponentOf(a), f.emin) - f.m);
    let r = rintEven(a / quantum) * quantum;
    if (r > f.max) r = f.ieee ? Infinity : f.max;
    return sign * r;
  }

  // The bit fields of a value of f: sign, exponent code, mantissa code (NaN: all ones in both).
  function fields(r, f) {
    const sign = r < 0 || Object.is(r, -0) ? 1 : 0;
    const a = Math.abs(r), top = 2 ** f.e - 1;
    if (Number.isNaN(a)) return { sign, exponent: top, mantissa: 2 ** f.m - 1 };
    if (a === Infinity) return { sign, exponent: top, mantissa: 0 };
    if (a < f.minNormal) return { sign, exponent: 0, mantissa: Math.round(a / f.minSub) };
    const e = exponentOf(a);
    return { sign, exponent: e + f.bias, mantissa: Math.round((a / 2 ** e - 1) * 2 ** f.m) };
  }

  // What the cast did to x, in words.
  function status(x, r, f) {
    if (Number.isNaN(x)) return "NaN";
    const a = Math.abs(x);
    if (!f.ieee && Math.fround(a) > f.max) return "saturated";
    if (Math.abs(r) === Infinity) return a === Infinity ? "inf" : "overflow: inf";
    if (r === 0 && a > 0) return "flushed to 0";
    if (r !== 0 && Math.abs(r) < f.minNormal) return "subnormal";
    return r === x ? "exact" : "rounded";
  }

  function bits(n, width) {
    return n.toString(2).padStart(width, "0");
  }

  function show(v) {
    if (Number.isNaN(v)) return "NaN";
    if (v === Infinity) return "inf";
    if (v === -Infinity) return "-inf";
    if (v === 0) return Object.is(v, -0) ? "-0" : "0";
    const a = Math.abs(v);
    if (a >= 1e-3 && a < 1e7) return String(Number(v.toPrecision(9)));
    return v.toExponential(6).replace(/\.?0+e/, "e");
  }

  function parse(text) {
    const t = String(text == null ? "" : text).trim().toLowerCase().replace(/[\u2212]/g, "-").replace(/,/g, "");
    if (t === "inf" || t === "+inf" || t === "infinity") return Infinity;
    if (t === "-inf" || t === "-infinity") return -Infinity;
    if (t === "nan") return NaN;
    if (t === "" || !/^[+-]?(\d+\.?\d*|\.\d+)(e[+-]?\d+)?$/.test(t)) return null;
    return Number(t);
  }

  function el(tag, attrs, parent) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (parent) parent.appendChild(node);
    return node;
  }

  class RoundingCalculator extends HTMLElement {
    static get observedAttributes() {
      return ["value", "print-state", "alt"];
    }

    static get formats() {
      return FORMATS.map((f) => Object.assign({}, f));
    }

    // What torch.tensor(x).to(dtype) gives: FP32 first (Math.fround), then the format.
    static cast(x, name) {
      const f = BY_NAME[name];
      if (!f) throw new Error(`unknown format ${name}`);
      const r = roundTo(Math.fround(x), f);
      return Object.assign({ value: r, status: status(x, r, f) }, fields(r, f));
    }

    static roundTo(x, name) {
      return roundTo(x, BY_NAME[name]);
    }

    constructor() {
      super();
      this._built = false;
    }

    printState() {
      const out = {};
      for (const part of (this.getAttribute("print-state") || "").split(";")) {
        const [k, v] = part.split("=").map((s) => (s || "").trim());
        if (k) out[k] = v;
      }
      return out;
    }

    value() {
      const v = parse(this.getAttribute("value"));
      return v === null ? 0.1 : v;
    }

    connectedCallback() {
      if (!this._built) this._build();
      const state = this.printState();
      if (state.value !== undefined) this.setAttribute("value", state.value);
      this._render();
    }

    attributeChangedCallback() {
      if (this._built) this._render();
    }

    _build() {
      this._built = true;
      this.classList.add("rounding-calculator");
      if (!this.hasAttribute("role")) this.setAttribute("role", "group");
      if (this.getAttribute("alt")) this.setAttribute("aria-label", this.getAttribute("alt"));
      const controls = el("div", { class: "rc-controls" }, this);
      const label = el("label", { class: "rc-field" }, controls);
      el("span", {}, label).textContent = "x =";
      this._input = el("input", { type: "text", inputmode: "decimal", spellcheck: "false", "aria-label": "value" }, label);
      this._input.addEventListener("input", () => {
        const v = parse(this._input.value);
        this._input.classList.toggle("rc-bad", v === null);
        if (v !== null) this.setAttribute("value", this._input.value.trim());
      });
      this._slider = el("input", { type: "range", min: LOG_MIN, max: LOG_MAX, step: "0.01",
                                   "aria-label": "log2 of the value's magnitude" }, controls);  // prettier-ignore
      this._slider.addEventListener("input", () => {
        const v = this.value();
        const sign = v < 0 ? -1 : 1;
        this.setAttribute("value", show(sign * Math.fround(2 ** Number(this._slider.value))));
      });
      const table = el("table", { class: "rc-table" }, this);
      const head = el("tr", {}, el("thead", {}, table));
      for (const h of ["format", "sign · exponent · mantissa", "rounded", "rel. error", ""]) el("th", {}, head).textContent = h;
      const body = el("tbody", {}, table);
      this._rows = {};
      for (const f of FORMATS) {
        const tr = el("tr", { "data-format": f.name }, body);
        el("th", { scope: "row" }, tr).textContent = f.name;
        const b = el("td", { class: "rc-bits" }, tr);
        const parts = ["rc-sign", "rc-exp", "rc-man"].map((c) => el("span", { class: c }, b));
        this._rows[f.name] = { parts, value: el("td", { class: "rc-value" }, tr), error: el("td", { class: "rc-error" }, tr),
                               status: el("td", { class: "rc-status" }, tr) };  // prettier-ignore
      }
      this.addEventListener("keydown", (event) => event.stopPropagation());
    }

    _render() {
      const x = this.value();
      if (document.activeElement !== this._input && parse(this._input.value) !== x) this._input.value = show(x);
      if (document.activeElement !== this._slider && Number.isFinite(x) && x !== 0) {
        this._slider.value = String(Math.min(LOG_MAX, Math.max(LOG_MIN, Math.log2(Math.abs(x)))));
      }
      for (const f of FORMATS) {
        const c = RoundingCalculator.cast(x, f.name);
        const row = this._rows[f.name];
        row.parts[0].textContent = bits(c.sign, 1);
        row.parts[1].textContent = bits(c.exponent, f.e);
        row.parts[2].textContent = bits(c.mantissa, f.m);
        row.value.textContent = show(c.value);
        const finite = Number.isFinite(c.value) && Number.isFinite(x) && x !== 0;
        const err = Math.abs(c.value - x) / Math.abs(x) * 100;
        row.error.textContent = !finite ? "–" : err === 0 ? "0" : `${err.toPrecision(2)}%`;
        row.status.textContent = c.status;
        row.status.dataset.kind = c.status.split(/[ :]/)[0];
        row.value.dataset.value = String(c.value);
      }
      this.dataset.value = String(x);
    }
  }

  customElements.define("rounding-calculator", RoundingCalculator);
})();
