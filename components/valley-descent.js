// <valley-descent>: SGD, momentum and Adam stepped (or played) on a two-dimensional quadratic
// whose condition number the audience sets. The arithmetic is model/valley.py's, operation for
// operation in float64 (tests/test_components_valley_descent.py compares the two within 1e-12):
//
//   f(x) = 1/2 x^T H x,  H = R diag(1/kappa, 1) R^T,  R the rotation by `angle` degrees,
//   x0 = R (-0.8 sqrt(kappa), 0.6), so f(x0) = 1/2.
//
// Attributes (numbers): kappa, angle, lr (SGD), momentum-lr, beta (momentum), adam-lr, beta1,
// beta2, eps, tol, max-steps (steps the play button goes to); alt; print-state="step=40".
// Keys inside it: right arrow or space steps, p plays or pauses, r resets.
"use strict";

(() => {
  const SVG = "http://www.w3.org/2000/svg";
  const KINDS = ["sgd", "momentum", "adam"];
  const NAMES = { sgd: "SGD", momentum: "momentum", adam: "Adam" };
  const DASH = { sgd: "", momentum: "2.2 1.2", adam: "0.5 1" };
  const SUPER = { "-": "⁻", 0: "⁰", 1: "¹", 2: "²", 3: "³", 4: "⁴", 5: "⁵", 6: "⁶", 7: "⁷", 8: "⁸", 9: "⁹" };
  const LEVELS = [0.5, 0.15, 0.05, 0.015, 0.005, 0.0015, 0.0005];
  const COUNT_CAP = 200000; // steps to tolerance are counted up to this many
  const DEFAULTS = {
    kappa: 100, angle: 0, lr: 1.8, "momentum-lr": 0.5, beta: 0.8, "adam-lr": 1, beta1: 0.9, beta2: 0.999, eps: 1e-8,
    tol: 1e-6, "max-steps": 200,
  };
  const W = 100, H = 50; // the picture's viewBox

  function hessian(kappa, angle) {
    const a = angle * (Math.PI / 180);
    const c = Math.cos(a), s = Math.sin(a);
    return [c * c / kappa + s * s, c * s * (1 / kappa - 1), s * s / kappa + c * c];
  }

  function start(kappa, angle) {
    const a = angle * (Math.PI / 180);
    const c = Math.cos(a), s = Math.sin(a);
    const u = -0.8 * Math.sqrt(kappa), w = 0.6;
    return [c * u - s * w, s * u + c * w];
  }

  function loss(h, x, y) {
    return 0.5 * (h[0] * x * x + 2 * h[1] * x * y + h[2] * y * y);
  }

  // One run's state and its update, as model/valley.py's Stepper does it.
  class Run {
    constructor(kind, cfg) {
      this.kind = kind;
      this.cfg = cfg;
      this.h = hessian(cfg.kappa, cfg.angle || 0);
      [this.x, this.y] = start(cfg.kappa, cfg.angle || 0);
      this.bx = 0; this.by = 0; this.vx = 0; this.vy = 0; this.p1 = 1; this.p2 = 1; this.t = 0;
    }

    step() {
      const h = this.h, c = this.cfg;
      const gx = h[0] * this.x + h[1] * this.y;
      const gy = h[1] * this.x + h[2] * this.y;
      this.t += 1;
      if (this.kind === "sgd") {
        this.x = this.x - c.lr * gx;
        this.y = this.y - c.lr * gy;
      } else if (this.kind === "momentum") {
        if (this.t === 1) {
          this.bx = gx; this.by = gy;
        } else {
          this.bx = c.beta * this.bx + gx;
          this.by = c.beta * this.by + gy;
        }
        this.x = this.x - c.lr * this.bx;
        this.y = this.y - c.lr * this.by;
      } else {
        const b1 = c.beta1, b2 = c.beta2, eps = c.eps === undefined ? 1e-8 : c.eps;
        this.bx = b1 * this.bx + (1 - b1) * gx;
        this.by = b1 * this.by + (1 - b1) * gy;
        this.vx = b2 * this.vx + (1 - b2) * (gx * gx);
        this.vy = b2 * this.vy + (1 - b2) * (gy * gy);
        this.p1 = this.p1 * b1;
        this.p2 = this.p2 * b2;
        const c1 = 1 - this.p1, c2 = 1 - this.p2;
        this.x = this.x - c.lr * (this.bx / c1) / (Math.sqrt(this.vx / c2) + eps);
        this.y = this.y - c.lr * (this.by / c1) / (Math.sqrt(this.vy / c2) + eps);
      }
    }
  }

  function settingsFor(kind, p) {
    const base = { kappa: p.kappa, angle: p.angle };
    if (kind === "adam") return { ...base, lr: p["adam-lr"], beta1: p.beta1, beta2: p.beta2, eps: p.eps };
    if (kind === "momentum") return { ...base, lr: p["momentum-lr"], beta: p.beta };
    return { ...base, lr: p.lr };
  }

  function fmtSteps(n) {
    return Math.round(n).toLocaleString("en-GB");
  }

  function fmtRatio(r) {
    if (!Number.isFinite(r)) return "diverged";
    if (r === 0) return "0";
    const e = Math.floor(Math.log10(r));
    return e >= -2 && e <= 2 ? r.toPrecision(2) : `${(r / 10 ** e).toFixed(1)}e${e}`;
  }

  function power(v) {
    const [mant, exp] = v.toExponential().split("e");
    const sup = String(Number(exp)).split("").map((ch) => SUPER[ch]).join("");
    return `${mant === "1" ? "" : `${mant}×`}10${sup}`;
  }

  function el(tag, attrs = {}, text = "") {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, v);
    if (text) node.textContent = text;
    return node;
  }

  function svg(tag, attrs = {}) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs)) node.setAttribute(k, String(v));
    return node;
  }

  customElements.define("valley-descent", class extends HTMLElement {
    static get observedAttributes() {
      return [...Object.keys(DEFAULTS), "print-state", "alt"];
    }

    // The pure computation, for the Chromium test and anyone else: the points x_0 .. x_steps.
    static trajectory(kind, cfg, steps) {
      const run = new Run(kind, cfg);
      const points = [[run.x, run.y]];
      for (let i = 0; i < steps; i++) {
        run.step();
        points.push([run.x, run.y]);
      }
      return points;
    }

    // The first step t with f(x_t) <= tol f(x_0), or null if none within maxSteps.
    static stepsToTolerance(kind, cfg, tol, maxSteps) {
      const run = new Run(kind, cfg);
      const level = tol * loss(run.h, run.x, run.y);
      for (let t = 1; t <= maxSteps; t++) {
        run.step();
        const f = loss(run.h, run.x, run.y);
        if (!Number.isFinite(f)) return null;
        if (f <= level) return t;
      }
      return null;
    }

    static hessian(kappa, angle) { return hessian(kappa, angle); }

    static start(kappa, angle) { return start(kappa, angle); }

    constructor() {
      super();
      this._built = false;
      this._timer = null;
      this._t = 0;
    }

    connectedCallback() {
      if (!this._built) this._build();
      this._reset(this._printStep());
    }

    disconnectedCallback() {
      this._pause();
    }

    attributeChangedCallback() {
      if (this._built) {
        this._syncControls();
        this._reset(this._printStep());
      }
    }

    _params() {
      const p = {};
      for (const [k, v] of Object.entries(DEFAULTS)) {
        const raw = this.getAttribute(k);
        const n = raw === null || raw.trim() === "" ? NaN : Number(raw.replace(/,/g, ""));
        p[k] = Number.isFinite(n) ? n : v;
      }
      p.kappa = Math.max(1, p.kappa);
      return p;
    }

    _printStep() {
      const state = this.getAttribute("print-state");
      if (!state) return 0;
      const m = /(?:^|[\s;,])step\s*=\s*(\d+)/.exec(state);
      return m ? Number(m[1]) : 0;
    }

    _build() {
      this._built = true;
      this.textContent = "";
      const root = el("div", { class: "nv-root", tabindex: "0", role: "group" });
      root.setAttribute("aria-label", this.getAttribute("alt") || "SGD, momentum and Adam in a narrow valley");
      this._svg = svg("svg", { viewBox: `0 0 ${W} ${H}`, class: "nv-plot", "aria-hidden": "true" });
      const clip = svg("clipPath", { id: `nv-clip-${Math.random().toString(36).slice(2)}` });
      clip.appendChild(svg("rect", { x: 0, y: 0, width: W, height: H }));
      this._svg.appendChild(clip);
      this._contours = svg("g", { class: "nv-contours", "clip-path": `url(#${clip.id})` });
      this._paths = svg("g", { "clip-path": `url(#${clip.id})` });
      this._svg.append(this._contours, this._paths);
      this._lines = {};
      this._dots = {};
      KINDS.forEach((k, i) => {
        const line = svg("polyline", { class: `nv-line nv-${k}`, fill: "none", "stroke-dasharray": DASH[k] });
        const dot = svg("circle", { class: `nv-dot nv-${k}`, r: 0.9 });
        this._lines[k] = line;
        this._dots[k] = dot;
        this._paths.append(line, dot);
        line.style.stroke = `var(--series-${i}, ${["#0072b2", "#d55e00", "#009e73"][i]})`;
        dot.style.fill = line.style.stroke;
      });
      this._startDot = svg("circle", { class: "nv-start", r: 1.1 });
      this._minDot = svg("path", { class: "nv-min", d: "" });
      this._paths.append(this._startDot, this._minDot);

      const controls = el("div", { class: "nv-controls" });
      this._inputs = {};
      const slider = (key, label, min, max, step, toValue, fromValue) => {
        const wrap = el("label", { class: "nv-slider" });
        const name = el("span", { class: "nv-label" }, label);
        const input = el("input", { type: "range", min, max, step });
        const out = el("output", { class: "nv-value" });
        input.addEventListener("input", () => {
          this.setAttribute(key, String(toValue(Number(input.value))));
        });
        wrap.append(name, input, out);
        controls.appendChild(wrap);
        this._inputs[key] = { input, out, fromValue };
      };
      const round = (v, d) => Number(v.toPrecision(d));
      slider("kappa", "κ", 0, 4, 0.25, (v) => round(10 ** v, 3), (v) => Math.log10(v));
      slider("lr", "SGD step", 0.05, 2.5, 0.05, (v) => v, (v) => v);
      slider("momentum-lr", "momentum step", 0.05, 2.5, 0.05, (v) => v, (v) => v);
      slider("beta", "momentum β", 0, 0.99, 0.01, (v) => v, (v) => v);
      slider("adam-lr", "Adam step", -2, 1, 0.1, (v) => round(10 ** v, 2), (v) => Math.log10(v));
      const rotate = el("label", { class: "nv-check" });
      this._rotate = el("input", { type: "checkbox" });
      this._rotate.addEventListener("change", () => this.setAttribute("angle", this._rotate.checked ? "45" : "0"));
      rotate.append(this._rotate, el("span", {}, "valley at 45°"));
      controls.appendChild(rotate);

      const buttons = el("div", { class: "nv-buttons" });
      this._stepBtn = el("button", { type: "button" }, "Step");
      this._playBtn = el("button", { type: "button" }, "Play");
      this._resetBtn = el("button", { type: "button" }, "Reset");
      this._stepBtn.addEventListener("click", () => { this._pause(); this._advance(1); });
      this._playBtn.addEventListener("click", () => this._toggle());
      this._resetBtn.addEventListener("click", () => { this._pause(); this._reset(0); });
      this._counter = el("span", { class: "nv-step" });
      buttons.append(this._stepBtn, this._playBtn, this._resetBtn, this._counter);

      this._table = el("table", { class: "nv-table" });
      const head = el("tr");
      for (const h of ["", "setting", "f(xₜ) / f(x₀)", "steps to tolerance"]) head.appendChild(el("th", {}, h));
      this._countHead = head.lastChild;
      this._table.appendChild(head);
      this._rows = {};
      KINDS.forEach((k, i) => {
        const tr = el("tr", { class: `nv-row nv-${k}` });
        const name = el("td", { class: "nv-name" });
        const swatch = el("span", { class: "nv-swatch" });
        swatch.style.borderTopColor = `var(--series-${i}, ${["#0072b2", "#d55e00", "#009e73"][i]})`;
        swatch.style.borderTopStyle = ["solid", "dashed", "dotted"][i];
        name.append(swatch, document.createTextNode(NAMES[k]));
        const cells = [el("td", { class: "nv-setting" }), el("td", { class: "nv-ratio" }), el("td", { class: "nv-count" })];
        tr.append(name, ...cells);
        this._table.appendChild(tr);
        this._rows[k] = cells;
      });

      const side = el("div", { class: "nv-side" });
      side.append(controls, buttons, this._table);
      // the picture's axes, named under it (the contours are drawn with the axes scaled apart)
      const figure = el("div", { class: "nv-figure" });
      figure.append(this._svg, el("div", { class: "nv-axes" }, "→ x₁, the flat direction; ↑ x₂, the steep one"));
      root.append(figure, side);
      root.addEventListener("keydown", (e) => this._key(e));
      this.appendChild(root);
      this._root = root;
      this._syncControls();
    }

    _syncControls() {
      const p = this._params();
      for (const [key, { input, out, fromValue }] of Object.entries(this._inputs)) {
        input.value = String(fromValue(p[key]));
        out.textContent = key === "kappa" ? fmtSteps(p.kappa) : String(p[key]);
      }
      this._rotate.checked = p.angle !== 0;
    }

    _key(e) {
      const used = ["ArrowLeft", "ArrowRight", "ArrowUp", "ArrowDown", "PageUp", "PageDown", "Home", "End", " ",
        "Enter", "p", "r"];
      if (!used.includes(e.key)) return;
      e.stopPropagation();
      const onControl = e.target instanceof HTMLInputElement || e.target instanceof HTMLButtonElement;
      if (onControl && e.key !== "p" && e.key !== "r") return; // the control's own keys
      if (e.key === "ArrowRight" || e.key === " ") { this._pause(); this._advance(1); }
      else if (e.key === "p") this._toggle();
      else if (e.key === "r") { this._pause(); this._reset(0); }
      else return;
      e.preventDefault();
    }

    _toggle() {
      if (this._timer) this._pause();
      else {
        const p = this._params();
        if (this._t >= p["max-steps"]) this._reset(0);
        this._timer = setInterval(() => {
          if (this._t >= this._params()["max-steps"]) this._pause();
          else this._advance(1);
        }, 120);
        this._playBtn.textContent = "Pause";
      }
    }

    _pause() {
      if (this._timer) clearInterval(this._timer);
      this._timer = null;
      if (this._playBtn) this._playBtn.textContent = "Play";
    }

    // New runs at step 0, then `steps` updates; steps to tolerance recounted for the settings.
    _reset(steps) {
      const p = this._params();
      this._p = p;
      this._runs = {};
      this._points = {};
      for (const k of KINDS) {
        this._runs[k] = new Run(k, settingsFor(k, p));
        this._points[k] = [[this._runs[k].x, this._runs[k].y]];
      }
      this._t = 0;
      this._f0 = loss(this._runs.sgd.h, this._runs.sgd.x, this._runs.sgd.y);
      const cls = this.constructor;
      this._counts = {};
      for (const k of KINDS) this._counts[k] = cls.stepsToTolerance(k, settingsFor(k, p), p.tol, COUNT_CAP);
      this._countHead.textContent = `steps to f ≤ ${power(p.tol)} f(x₀)`;
      this._drawFrame();
      this._advance(steps);
    }

    _advance(n) {
      for (let i = 0; i < n; i++) {
        for (const k of KINDS) {
          const r = this._runs[k];
          r.step();
          this._points[k].push([r.x, r.y]);
        }
        this._t += 1;
      }
      this._draw();
    }

    _view() {
      // the flat axis and the steep one each fill the picture (the axes are scaled apart)
      const p = this._p, a = p.angle * (Math.PI / 180);
      const ax = Math.sqrt(p.kappa), c = Math.abs(Math.cos(a)), s = Math.abs(Math.sin(a));
      const xr = 1.15 * (ax * c + s), yr = 1.15 * (ax * s + c);
      return { sx: (x) => W / 2 + (x / xr) * (W / 2), sy: (y) => H / 2 - (y / yr) * (H / 2) };
    }

    _drawFrame() {
      const p = this._p, v = this._view(), a = p.angle * (Math.PI / 180);
      const c = Math.cos(a), s = Math.sin(a);
      this._contours.textContent = "";
      for (const f of LEVELS) {
        const pts = [];
        for (let i = 0; i <= 96; i++) {
          const phi = (2 * Math.PI * i) / 96;
          const u = Math.sqrt(2 * f * p.kappa) * Math.cos(phi), w = Math.sqrt(2 * f) * Math.sin(phi);
          pts.push(`${v.sx(c * u - s * w).toFixed(3)},${v.sy(s * u + c * w).toFixed(3)}`);
        }
        this._contours.appendChild(svg("polyline", { points: pts.join(" "), class: "nv-contour", fill: "none" }));
      }
      const [x0, y0] = start(p.kappa, p.angle);
      this._startDot.setAttribute("cx", v.sx(x0).toFixed(3));
      this._startDot.setAttribute("cy", v.sy(y0).toFixed(3));
      const mx = v.sx(0), my = v.sy(0);
      this._minDot.setAttribute("d", `M${mx - 1.2},${my} L${mx + 1.2},${my} M${mx},${my - 1.2} L${mx},${my + 1.2}`);
    }

    _draw() {
      const v = this._view(), p = this._p, lim = 1e6;
      for (const k of KINDS) {
        const pts = [];
        for (const [x, y] of this._points[k]) {
          const X = v.sx(x), Y = v.sy(y);
          if (!Number.isFinite(X) || !Number.isFinite(Y) || Math.abs(X) > lim || Math.abs(Y) > lim) break;
          pts.push(`${X.toFixed(3)},${Y.toFixed(3)}`);
        }
        this._lines[k].setAttribute("points", pts.join(" "));
        const last = pts.length ? pts[pts.length - 1].split(",") : ["-10", "-10"];
        this._dots[k].setAttribute("cx", last[0]);
        this._dots[k].setAttribute("cy", last[1]);
        const r = this._runs[k];
        const [setting, ratio, count] = this._rows[k];
        setting.textContent = k === "sgd" ? `η ${p.lr}` : k === "momentum" ? `η ${p["momentum-lr"]}, β ${p.beta}`
          : `η ${p["adam-lr"]}, β₁ ${p.beta1}, β₂ ${p.beta2}`;
        ratio.textContent = fmtRatio(loss(r.h, r.x, r.y) / this._f0);
        const n = this._counts[k];
        count.textContent = n === null ? `not within ${fmtSteps(COUNT_CAP)}` : fmtSteps(n);
      }
      this._counter.textContent = `step ${this._t}`;
    }
  });
})();
