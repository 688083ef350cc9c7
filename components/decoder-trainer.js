// <decoder-trainer run="ch01.trainer" alt="..."></decoder-trainer>
//
// The Decoder (model/decoder.py) trained live on a slide: its forward and backward pass and
// AdamW with warmup, cosine decay and clipping (model/train.py), over Float64Arrays. Given the
// run the build exported (window.SLIDEGEN_RUNS[run].series: vocabulary, training and validation
// ids, the seed's initial weights, every step's batch starts) it starts where the Python run
// starts and sees the batches it sees, so in float64 it matches model/reference.py step for step
// (tests/test_components_decoder_trainer.py).
//
// The computation is `decoderCore()`, a plain function with no outside references: the element
// calls it on the page (and exposes it as the static `core`), and a Web Worker built from its
// source text (a Blob, since file:// pages cannot load worker scripts) trains without blocking
// the page. Attributes: run, d-model, context, heads, layers, lr, steps, batch, warmup,
// eval-every, sample-every, prompt, temperature, seed (for a config the run does not hold),
// print-state ("finished": the Python run's curve; "step=N": its first N steps), alt, fallback.

function decoderCore() {
  "use strict";

  // ---------------------------------------------------------------- erf and the exact GELU
  // W. J. Cody's rational approximations (Math. Comp. 23, 1969), as model/reference.py has them.
  const A = [3.16112374387056560e00, 1.13864154151050156e02, 3.77485237685302021e02,
    3.20937758913846947e03, 1.85777706184603153e-1];
  const B = [2.36012909523441209e01, 2.44024637934444173e02, 1.28261652607737228e03,
    2.84423683343917062e03];
  const C = [5.64188496988670089e-1, 8.88314979438837594e00, 6.61191906371416295e01,
    2.98635138197400131e02, 8.81952221241769090e02, 1.71204761263407058e03,
    2.05107837782607147e03, 1.23033935479799725e03, 2.15311535474403846e-8];
  const D = [1.57449261107098347e01, 1.17693950891312499e02, 5.37181101862009858e02,
    1.62138957456669019e03, 3.29079923573345963e03, 4.36261909014324716e03,
    3.43936767414372164e03, 1.23033935480374942e03];
  const P = [3.05326634961232344e-1, 3.60344899949804439e-1, 1.25781726111229246e-1,
    1.60837851487422766e-2, 6.58749161529837803e-4, 1.63153871373020978e-2];
  const Q = [2.56852019228982242e00, 1.87295284992346725e00, 5.27905102951428412e-1,
    6.05183413124413191e-2, 2.33520497626869185e-3];
  const INV_SQRT_PI = 5.6418958354775628695e-1;
  const SQRT_HALF = 1 / Math.sqrt(2);
  const INV_SQRT_2PI = 1 / Math.sqrt(2 * Math.PI);

  function expNegSq(y) {
    const y16 = Math.trunc(y * 16) / 16; // y16^2 is exact; only the small rest rounds
    return Math.exp(-y16 * y16) * Math.exp(-(y - y16) * (y + y16));
  }

  function erf(x) {
    const y = Math.abs(x);
    if (y <= 0.5) {
      const z = x * x;
      let num = A[4] * z, den = z;
      for (let i = 0; i < 3; i++) { num = (num + A[i]) * z; den = (den + B[i]) * z; }
      return x * (num + A[3]) / (den + B[3]);
    }
    if (y <= 4) {
      let num = C[8] * y, den = y;
      for (let i = 0; i < 7; i++) { num = (num + C[i]) * y; den = (den + D[i]) * y; }
      const erfc = expNegSq(y) * (num + C[7]) / (den + D[7]);
      return x < 0 ? -((0.5 - erfc) + 0.5) : (0.5 - erfc) + 0.5;
    }
    if (y > 4) {
      const yb = Math.min(y, 6);
      const z = 1 / (yb * yb);
      let num = P[5] * z, den = z;
      for (let i = 0; i < 4; i++) { num = (num + P[i]) * z; den = (den + Q[i]) * z; }
      const erfc = expNegSq(yb) * (INV_SQRT_PI - z * (num + P[4]) / (den + Q[4])) / yb;
      return x < 0 ? -((0.5 - erfc) + 0.5) : (0.5 - erfc) + 0.5;
    }
    return NaN;
  }

  function gelu(x) { return 0.5 * x * (1 + erf(x * SQRT_HALF)); }

  function geluGrad(x) { return 0.5 * (1 + erf(x * SQRT_HALF)) + x * Math.exp(-0.5 * x * x) * INV_SQRT_2PI; }

  // ---------------------------------------------------------------- configs and the schedule

  const MODEL = { vocab: 64, dModel: 16, context: 16, heads: 2, layers: 1, mlpRatio: 4, eps: 1e-5, initStd: 0.02 };
  const TRAIN = { steps: 2000, batch: 32, lr: 2e-3, warmup: 100, schedule: "cosine", beta1: 0.9, beta2: 0.999,
    adamEps: 1e-8, weightDecay: 0.01, clip: 1.0, evalEvery: 100 };

  /** The learning rate of update `step` (0-based), as model/train.py lr_at computes it. */
  function lrAt(step, t) {
    if (step < t.warmup) return t.lr * (step + 1) / t.warmup;
    if (t.schedule === "constant") return t.lr;
    const progress = Math.min(1, (step - t.warmup) / Math.max(1, t.steps - t.warmup));
    return t.lr * 0.5 * (1 + Math.cos(Math.PI * progress));
  }

  /** Where each weight sits in the flat buffer: Decoder.named_parameters() order. */
  function layout(m) {
    const Dm = m.dModel, H = m.mlpRatio * Dm;
    const names = [["wte.weight", m.vocab, Dm], ["wpe.weight", m.context, Dm]];
    for (let l = 0; l < m.layers; l++) {
      for (const w of ["w_q", "w_k", "w_v", "w_o"]) names.push([`blocks.${l}.attn.${w}.weight`, Dm, Dm]);
      names.push([`blocks.${l}.mlp.w_in.weight`, H, Dm], [`blocks.${l}.mlp.w_out.weight`, Dm, H]);
    }
    names.push(["lm_head.weight", m.vocab, Dm]);
    const off = {};
    let size = 0;
    for (const [name, rows, cols] of names) { off[name] = size; size += rows * cols; }
    return { names, off, size };
  }

  // ---------------------------------------------------------------- linear algebra on flat rows

  // a[ao..ao+n) . b[bo..bo+n), four accumulators (independent adds run side by side)
  function dot(a, ao, b, bo, n) {
    let s0 = 0, s1 = 0, s2 = 0, s3 = 0, i = 0;
    for (; i + 3 < n; i += 4) {
      s0 += a[ao + i] * b[bo + i];
      s1 += a[ao + i + 1] * b[bo + i + 1];
      s2 += a[ao + i + 2] * b[bo + i + 2];
      s3 += a[ao + i + 3] * b[bo + i + 3];
    }
    for (; i < n; i++) s0 += a[ao + i] * b[bo + i];
    return (s0 + s1) + (s2 + s3);
  }

  // out[c, r] = x[r, c] for x (R, C) at offset xo
  function transpose(out, x, xo, R, Cn) {
    for (let c = 0; c < Cn; c++) { const o = c * R; for (let r = 0; r < R; r++) out[o + r] = x[xo + r * Cn + c]; }
  }

  // out[m, j] (+)= sum_k a[m, k] b[j, k] for a (M, K) and b (J, K) (row strides lda, ldb), out (M, J)
  // at offset oo. Four columns at a time: each a[m, k] is loaded once for four products.
  function gemmNT(out, oo, a, ao, lda, b, bo, ldb, M, J, K, acc) {
    for (let m = 0; m < M; m++) {
      const ar = ao + m * lda, orow = oo + m * J;
      let j = 0;
      for (; j + 3 < J; j += 4) {
        const b0 = bo + j * ldb, b1 = b0 + ldb, b2 = b1 + ldb, b3 = b2 + ldb;
        let s0 = 0, s1 = 0, s2 = 0, s3 = 0;
        for (let k = 0; k < K; k++) {
          const v = a[ar + k];
          s0 += v * b[b0 + k]; s1 += v * b[b1 + k]; s2 += v * b[b2 + k]; s3 += v * b[b3 + k];
        }
        if (acc) { out[orow + j] += s0; out[orow + j + 1] += s1; out[orow + j + 2] += s2; out[orow + j + 3] += s3; }
        else { out[orow + j] = s0; out[orow + j + 1] = s1; out[orow + j + 2] = s2; out[orow + j + 3] = s3; }
      }
      for (; j < J; j++) {
        const v = dot(a, ar, b, bo + j * ldb, K);
        out[orow + j] = acc ? out[orow + j] + v : v;
      }
    }
  }

  // out[n, o] = sum_i x[n, i] w[o, i]   (nn.Linear: y = x @ W.T)
  function linF(out, x, w, wo, N, In, Out) {
    gemmNT(out, 0, x, 0, In, w, wo, In, N, Out, In, false);
  }

  // gw[o, i] += sum_n dy[n, o] x[n, i]; dx[n, i] (+)= sum_o dy[n, o] w[o, i]: the first over
  // feature-major copies of dy and x (sc.a, sc.b), the second over the transposed weight (sc.w)
  function linB(dx, add, gw, w, wo, dy, x, N, In, Out, sc) {
    transpose(sc.a, dy, 0, N, Out);
    transpose(sc.b, x, 0, N, In);
    gemmNT(gw, wo, sc.a, 0, N, sc.b, 0, N, Out, In, N, true);
    if (dx === null) return;
    transpose(sc.w, w, wo, Out, In);
    gemmNT(dx, 0, dy, 0, Out, sc.w, 0, Out, N, In, Out, add);
  }

  // y = (x - mean) / sqrt(var + eps) per row of D; rstd per row
  function lnF(y, rstd, x, N, Dm, eps) {
    for (let n = 0; n < N; n++) {
      const o = n * Dm;
      let mean = 0;
      for (let i = 0; i < Dm; i++) mean += x[o + i];
      mean /= Dm;
      let v = 0;
      for (let i = 0; i < Dm; i++) { const c = x[o + i] - mean; y[o + i] = c; v += c * c; }
      const r = 1 / Math.sqrt(v / Dm + eps);
      rstd[n] = r;
      for (let i = 0; i < Dm; i++) y[o + i] *= r;
    }
  }

  // dx = rstd (g - y mean(g y) - mean(g - y mean(g y)));  add: dx += that
  function lnB(dx, add, g, y, rstd, N, Dm) {
    for (let n = 0; n < N; n++) {
      const o = n * Dm;
      let gy = 0;
      for (let i = 0; i < Dm; i++) gy += g[o + i] * y[o + i];
      gy /= Dm;
      let mean = 0;
      for (let i = 0; i < Dm; i++) mean += g[o + i] - y[o + i] * gy;
      mean /= Dm;
      const r = rstd[n];
      for (let i = 0; i < Dm; i++) {
        const v = (g[o + i] - y[o + i] * gy - mean) * r;
        dx[o + i] = add ? dx[o + i] + v : v;
      }
    }
  }

  // ---------------------------------------------------------------- the network

  /** The Decoder's activations for up to `maxB` windows of the model's context. */
  class Net {
    constructor(m, maxB) {
      this.m = m;
      this.lay = layout(m);
      const T = m.context, Dm = m.dModel, Hd = m.mlpRatio * Dm, N = maxB * T, V = m.vocab;
      const f = (n) => new Float64Array(n);
      this.maxB = maxB;
      this.layers = [];
      for (let l = 0; l < m.layers; l++) {
        this.layers.push({ x: f(N * Dm), y1: f(N * Dm), r1: f(N), q: f(N * Dm), k: f(N * Dm), v: f(N * Dm),
          att: f(maxB * m.heads * T * T), ya: f(N * Dm), xm: f(N * Dm), y2: f(N * Dm), r2: f(N),
          h: f(N * Hd), g: f(N * Hd), phi: f(N * Hd) });
      }
      this.xo = f(N * Dm); this.yf = f(N * Dm); this.rf = f(N); this.logits = f(N * V);
      this.dx = f(N * Dm); this.dt = f(N * Dm); this.dt2 = f(N * Dm); this.dh = f(N * Hd); this.dhg = f(N * Hd);
      this.sc = { a: f(N * Math.max(V, Hd)), b: f(N * Math.max(V, Hd)), w: f(Math.max(V, Hd) * Dm) };
      this.dq = f(N * Dm); this.dk = f(N * Dm); this.dv = f(N * Dm); this.datt = f(T);
    }

    /** Logits of windows idx (Bn rows of Tn ids, flat) into this.logits (Bn*Tn, V). */
    forward(w, idx, Bn, Tn) {
      const m = this.m, lay = this.lay, Dm = m.dModel, Hd = m.mlpRatio * Dm, H = m.heads, Dh = Dm / H;
      const N = Bn * Tn, V = m.vocab, scale = 1 / Math.sqrt(Dh), T = m.context;
      let x = this.layers.length ? this.layers[0].x : this.xo;
      const wte = lay.off["wte.weight"], wpe = lay.off["wpe.weight"];
      for (let n = 0; n < N; n++) {
        const t = n % Tn, a = wte + idx[n] * Dm, p = wpe + t * Dm;
        for (let i = 0; i < Dm; i++) x[n * Dm + i] = w[a + i] + w[p + i];
      }
      for (let l = 0; l < m.layers; l++) {
        const c = this.layers[l], pre = `blocks.${l}.`;
        const next = l + 1 < m.layers ? this.layers[l + 1].x : this.xo;
        lnF(c.y1, c.r1, x, N, Dm, m.eps);
        linF(c.q, c.y1, w, lay.off[pre + "attn.w_q.weight"], N, Dm, Dm);
        linF(c.k, c.y1, w, lay.off[pre + "attn.w_k.weight"], N, Dm, Dm);
        linF(c.v, c.y1, w, lay.off[pre + "attn.w_v.weight"], N, Dm, Dm);
        const att = c.att, q = c.q, k = c.k, v = c.v, ya = c.ya;
        for (let b = 0; b < Bn; b++) {
          for (let h = 0; h < H; h++) {
            const ao = (b * H + h) * T * T;
            for (let t = 0; t < Tn; t++) {
              const qo = (b * Tn + t) * Dm + h * Dh, row = ao + t * T;
              let top = -Infinity;
              for (let s = 0; s <= t; s++) {
                const ko = (b * Tn + s) * Dm + h * Dh;
                let d = 0;
                for (let j = 0; j < Dh; j++) d += q[qo + j] * k[ko + j];
                d *= scale;
                att[row + s] = d;
                if (d > top) top = d;
              }
              let sum = 0;
              for (let s = 0; s <= t; s++) { const e = Math.exp(att[row + s] - top); att[row + s] = e; sum += e; }
              for (let s = 0; s <= t; s++) att[row + s] /= sum;
              for (let j = 0; j < Dh; j++) ya[qo + j] = 0;
              for (let s = 0; s <= t; s++) {
                const a = att[row + s], vo = (b * Tn + s) * Dm + h * Dh;
                for (let j = 0; j < Dh; j++) ya[qo + j] += a * v[vo + j];
              }
            }
          }
        }
        linF(c.xm, ya, w, lay.off[pre + "attn.w_o.weight"], N, Dm, Dm);
        for (let i = 0; i < N * Dm; i++) c.xm[i] += x[i];
        lnF(c.y2, c.r2, c.xm, N, Dm, m.eps);
        linF(c.h, c.y2, w, lay.off[pre + "mlp.w_in.weight"], N, Dm, Hd);
        for (let i = 0; i < N * Hd; i++) { // exact GELU x Phi(x); Phi is kept for the backward pass
          const phi = 0.5 * (1 + erf(c.h[i] * SQRT_HALF));
          c.phi[i] = phi;
          c.g[i] = c.h[i] * phi;
        }
        linF(next, c.g, w, lay.off[pre + "mlp.w_out.weight"], N, Hd, Dm);
        for (let i = 0; i < N * Dm; i++) next[i] += c.xm[i];
        x = next;
      }
      lnF(this.yf, this.rf, this.xo, N, Dm, m.eps);
      linF(this.logits, this.yf, w, lay.off["lm_head.weight"], N, Dm, V);
      return this.logits;
    }

    /** Mean cross-entropy of the logits against `targets`; with `dl`, its gradient (/N) into dl. */
    crossEntropy(targets, N, dl) {
      const V = this.m.vocab, lg = this.logits;
      let total = 0;
      for (let n = 0; n < N; n++) {
        const o = n * V, y = targets[n];
        let top = -Infinity;
        for (let v = 0; v < V; v++) if (lg[o + v] > top) top = lg[o + v];
        const ly = lg[o + y];
        let s = 0;
        if (dl) {
          for (let v = 0; v < V; v++) { const e = Math.exp(lg[o + v] - top); lg[o + v] = e; s += e; }
          for (let v = 0; v < V; v++) lg[o + v] = lg[o + v] / s; // the probabilities, in place
          lg[o + y] -= 1;
          for (let v = 0; v < V; v++) lg[o + v] /= N; // (probs - one-hot) / N
        } else {
          for (let v = 0; v < V; v++) s += Math.exp(lg[o + v] - top);
        }
        total += top + Math.log(s) - ly;
      }
      return total / N;
    }

    /** Loss on (idx, targets) and its gradient into g (zeroed here); the weights w are not changed. */
    lossAndGrad(w, g, idx, targets, Bn) {
      const m = this.m, lay = this.lay, Dm = m.dModel, Hd = m.mlpRatio * Dm, H = m.heads, Dh = Dm / H;
      const T = m.context, N = Bn * T, V = m.vocab, scale = 1 / Math.sqrt(Dh);
      this.forward(w, idx, Bn, T);
      const loss = this.crossEntropy(targets, N, true);
      g.fill(0);
      const dl = this.logits, dx = this.dx, dt = this.dt, dt2 = this.dt2;
      linB(dt, false, g, w, lay.off["lm_head.weight"], dl, this.yf, N, Dm, V, this.sc);
      lnB(dx, false, dt, this.yf, this.rf, N, Dm);
      for (let l = m.layers - 1; l >= 0; l--) {
        const c = this.layers[l], pre = `blocks.${l}.`;
        const oIn = lay.off[pre + "mlp.w_in.weight"], oOut = lay.off[pre + "mlp.w_out.weight"];
        // MLP: dx is the gradient of the block's output
        const dh = this.dh, dhg = this.dhg;
        linB(dhg, false, g, w, oOut, dx, c.g, N, Hd, Dm, this.sc);
        for (let i = 0; i < N * Hd; i++) { // d/dx x Phi(x) = Phi(x) + x phi(x)
          const x = c.h[i];
          dh[i] = dhg[i] * (c.phi[i] + x * Math.exp(-0.5 * x * x) * INV_SQRT_2PI);
        }
        linB(dt, false, g, w, oIn, dh, c.y2, N, Dm, Hd, this.sc);
        lnB(dx, true, dt, c.y2, c.r2, N, Dm);
        // attention
        linB(dt, false, g, w, lay.off[pre + "attn.w_o.weight"], dx, c.ya, N, Dm, Dm, this.sc);
        const att = c.att, q = c.q, k = c.k, v = c.v, dq = this.dq, dk = this.dk, dv = this.dv, da = this.datt;
        dq.fill(0); dk.fill(0); dv.fill(0);
        for (let b = 0; b < Bn; b++) {
          for (let h = 0; h < H; h++) {
            const ao = (b * H + h) * T * T;
            for (let t = 0; t < T; t++) {
              const yo = (b * T + t) * Dm + h * Dh, row = ao + t * T;
              let dot = 0;
              for (let s = 0; s <= t; s++) {
                const vo = (b * T + s) * Dm + h * Dh, a = att[row + s];
                let d = 0;
                for (let j = 0; j < Dh; j++) { d += dt[yo + j] * v[vo + j]; dv[vo + j] += a * dt[yo + j]; }
                da[s] = d;
                dot += d * a;
              }
              for (let s = 0; s <= t; s++) {
                const d = att[row + s] * (da[s] - dot) * scale, ko = (b * T + s) * Dm + h * Dh;
                for (let j = 0; j < Dh; j++) { dq[yo + j] += d * k[ko + j]; dk[ko + j] += d * q[yo + j]; }
              }
            }
          }
        }
        linB(dt2, false, g, w, lay.off[pre + "attn.w_q.weight"], dq, c.y1, N, Dm, Dm, this.sc);
        linB(dt2, true, g, w, lay.off[pre + "attn.w_k.weight"], dk, c.y1, N, Dm, Dm, this.sc);
        linB(dt2, true, g, w, lay.off[pre + "attn.w_v.weight"], dv, c.y1, N, Dm, Dm, this.sc);
        lnB(dx, true, dt2, c.y1, c.r1, N, Dm);
      }
      const wte = lay.off["wte.weight"], wpe = lay.off["wpe.weight"];
      for (let n = 0; n < N; n++) {
        const a = wte + idx[n] * Dm, p = wpe + (n % T) * Dm, o = n * Dm;
        for (let i = 0; i < Dm; i++) { g[a + i] += dx[o + i]; g[p + i] += dx[o + i]; }
      }
      return loss;
    }
  }

  // ---------------------------------------------------------------- data, weights, the trainer

  /** A small seeded generator (mulberry32) for configs the run does not hold, and for sampling. */
  function rng(seed) {
    let a = seed >>> 0;
    return () => {
      a = (a + 0x6d2b79f5) >>> 0;
      let t = a;
      t = Math.imul(t ^ (t >>> 15), t | 1);
      t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
      return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
    };
  }

  /** The float32 bit patterns of the exported weights as float64 numbers (exact). */
  function weightsFromBits(bits) {
    return Float64Array.from(new Float32Array(Uint32Array.from(bits).buffer));
  }

  /** Everything a training run needs, from a run's series (or generated for another config). */
  function setup(series, options) {
    const o = options || {};
    const m = Object.assign({}, MODEL), t = Object.assign({}, TRAIN);
    if (series && series.model) {
      [m.vocab, m.dModel, m.context, m.heads, m.layers, m.mlpRatio] = series.model;
      [t.steps, t.batch, t.warmup, t.evalEvery] = series.train_ints;
      t.schedule = series.train_ints[4] ? "constant" : "cosine";
      [t.lr, t.beta1, t.beta2, t.adamEps, t.weightDecay, t.clip] = series.train_floats;
    }
    const exported = { dModel: m.dModel, context: m.context, heads: m.heads, layers: m.layers, batch: t.batch,
      steps: t.steps, lr: t.lr };
    for (const key of ["dModel", "context", "heads", "layers"]) if (o[key] != null) m[key] = o[key];
    for (const key of ["steps", "batch", "lr", "warmup", "evalEvery"]) if (o[key] != null) t[key] = o[key];
    if (m.dModel % m.heads) throw new Error(`d-model ${m.dModel} is not divisible by heads ${m.heads}`);
    const same = series && series.init_bits && ["dModel", "context", "heads", "layers"].every((k) => m[k] === exported[k]);
    const chars = series && series.vocab ? series.vocab.map((c) => String.fromCodePoint(c)) : null;
    const train = series && series.train_ids ? Int32Array.from(series.train_ids) : new Int32Array(0);
    const val = series && series.val_ids ? Int32Array.from(series.val_ids) : new Int32Array(0);
    const lay = layout(m);
    let w;
    if (same) {
      w = weightsFromBits(series.init_bits);
    } else { // a config the run does not hold: N(0, init_std) from a seeded generator
      const r = rng(o.seed == null ? 0 : o.seed);
      w = new Float64Array(lay.size);
      for (let i = 0; i < w.length; i++) {
        const u = 1 - r(), v = r();
        w[i] = m.initStd * Math.sqrt(-2 * Math.log(u)) * Math.cos(2 * Math.PI * v);
      }
    }
    // the exported batch starts hold for the exported batch, context and steps only
    const starts = series && series.starts && same && t.batch === exported.batch ? Int32Array.from(series.starts) : null;
    return { m, t, chars, train, val, w, starts, exact: same && starts !== null && t.steps <= exported.steps,
      seed: o.seed == null ? 0 : o.seed };
  }

  class Trainer {
    constructor(s) {
      this.s = s;
      this.m = s.m; this.t = s.t;
      this.net = new Net(s.m, Math.max(s.t.batch, 64));
      this.w = Float64Array.from(s.w);
      this.g = new Float64Array(this.w.length);
      this.mom = new Float64Array(this.w.length);
      this.vel = new Float64Array(this.w.length);
      this.step = 0;
      this.draw = rng(1000003 + s.seed);
      const T = s.m.context, Bt = s.t.batch;
      this.x = new Int32Array(Bt * T); this.y = new Int32Array(Bt * T);
    }

    /** The windows of update `k`: the exported starts, or seeded ones past them. */
    batch(k) {
      const T = this.m.context, Bt = this.t.batch, tr = this.s.train, st = this.s.starts;
      const high = tr.length - T;
      for (let b = 0; b < Bt; b++) {
        const i = k * Bt + b;
        const s0 = st !== null && i < st.length ? st[i] : Math.floor(this.draw() * high);
        for (let j = 0; j < T; j++) { this.x[b * T + j] = tr[s0 + j]; this.y[b * T + j] = tr[s0 + j + 1]; }
      }
    }

    /** Loss and gradient (into g) of windows [b0, b1) of update k's batch, at weights w. */
    partial(k, b0, b1, w, g) {
      const T = this.m.context;
      this.batch(k);
      return this.net.lossAndGrad(w, g, this.x.subarray(b0 * T, b1 * T), this.y.subarray(b0 * T, b1 * T), b1 - b0);
    }

    /** Update number step + 1 from the batch's loss and gradient (in this.g): clip to the
     * global norm, then AdamW, as model/reference.py computes them. Returns {loss, gradNorm, lr}. */
    apply(loss) {
      const t = this.t, k = this.step;
      const g = this.g, w = this.w, mo = this.mom, ve = this.vel, P = w.length;
      let sq = 0;
      for (let i = 0; i < P; i++) sq += g[i] * g[i];
      const norm = Math.sqrt(sq);
      const coef = Math.min(t.clip / (norm + 1e-6), 1);
      const lr = lrAt(k, t), step = k + 1;
      const decay = 1 - lr * t.weightDecay, b1 = 1 - t.beta1, b2 = t.beta2, ob2 = 1 - t.beta2;
      const bc1 = 1 - Math.pow(t.beta1, step), bc2 = Math.sqrt(1 - Math.pow(t.beta2, step));
      const size = lr / bc1, eps = t.adamEps;
      for (let i = 0; i < P; i++) {
        const gi = g[i] * coef;
        const p = w[i] * decay;
        const m = mo[i] + (gi - mo[i]) * b1;
        const v = ve[i] * b2 + (gi * gi) * ob2;
        mo[i] = m; ve[i] = v;
        w[i] = p - size * (m / (Math.sqrt(v) / bc2 + eps));
      }
      this.step = step;
      return { loss, gradNorm: norm, lr };
    }

    /** One update on the whole batch: {loss, gradNorm, lr} (loss and norm before the update). */
    update() {
      return this.apply(this.partial(this.step, 0, this.t.batch, this.w, this.g));
    }

    /** Mean loss over every validation window (as model/data.py val_windows cuts them). */
    valLoss() {
      const T = this.m.context, val = this.s.val, n = Math.floor((val.length - 1) / T), chunk = this.net.maxB;
      if (n < 1) return NaN;
      const x = new Int32Array(chunk * T), y = new Int32Array(chunk * T);
      let total = 0;
      for (let b0 = 0; b0 < n; b0 += chunk) {
        const bn = Math.min(chunk, n - b0);
        for (let b = 0; b < bn; b++) {
          for (let j = 0; j < T; j++) { x[b * T + j] = val[(b0 + b) * T + j]; y[b * T + j] = val[(b0 + b) * T + j + 1]; }
        }
        this.net.forward(this.w, x, bn, T);
        total += this.net.crossEntropy(y, bn * T, false) * bn * T;
      }
      return total / (n * T);
    }

    /** `count` characters after `prompt` (ids), greedy at temperature 0, else sampled. */
    generate(prompt, count, temperature, seed) {
      const T = this.m.context, V = this.m.vocab, ids = Array.from(prompt), r = rng(seed || 0);
      const out = [];
      const x = new Int32Array(T);
      for (let c = 0; c < count; c++) {
        const ctx = ids.slice(-T);
        for (let j = 0; j < ctx.length; j++) x[j] = ctx[j];
        const lg = this.net.forward(this.w, x, 1, ctx.length), o = (ctx.length - 1) * V;
        let best = 0;
        if (!(temperature > 0)) {
          for (let v = 1; v < V; v++) if (lg[o + v] > lg[o + best]) best = v;
        } else {
          let top = -Infinity;
          for (let v = 0; v < V; v++) top = Math.max(top, lg[o + v] / temperature);
          const p = new Float64Array(V);
          let s = 0;
          for (let v = 0; v < V; v++) { p[v] = Math.exp(lg[o + v] / temperature - top); s += p[v]; }
          let u = r() * s;
          for (best = 0; best < V - 1; best++) { u -= p[best]; if (u <= 0) break; }
        }
        ids.push(best); out.push(best);
      }
      return out;
    }
  }

  // ---------------------------------------------------------------- the training service
  // The same message protocol on a Worker and on the page: {cmd: "init", series, options},
  // "play", "pause", "step", "reset", {cmd: "speed", value}; replies {kind: "ready" | "progress"}.
  // With {cmd: "port", port} (a MessageChannel to a second worker, told {cmd: "helper", port}),
  // each update's batch is split in two and the helper computes the second half's gradient.

  function service(post) {
    let setupData = null, tr = null, playing = false, speed = 0, timer = null, busy = false, gen = 0;
    let helper = null, helperReply = null, lastPost = 0, pending = null;
    const times = [];
    const wake = new MessageChannel();
    wake.port1.onmessage = () => advance();
    const soon = () => wake.port2.postMessage(0); // a zero-delay turn of the event loop (no timer clamp)

    function options() { return setupData.options; }
    function evalRecord() { return { step: tr.step, val: tr.valLoss() }; }
    function sample() {
      const o = options();
      const prompt = (o.promptIds || []).filter((i) => i >= 0 && i < tr.m.vocab);
      return { step: tr.step, ids: tr.generate(prompt.length ? prompt : [0], o.sampleLength || 64,
        o.temperature || 0, tr.step + 1) };
    }
    function flush(force) {
      const now = Date.now();
      if (!force && now - lastPost < 50 && !pending.evals.length) return;
      lastPost = now;
      times.push([now, tr.step]);
      while (times.length > 2 && now - times[0][0] > 2000) times.shift();
      const dt = now - times[0][0];
      const sps = times.length > 1 && dt > 0 ? (tr.step - times[0][1]) * 1000 / dt : 0;
      post(Object.assign({ kind: "progress", sps, playing, done: tr.step >= tr.t.steps, step: tr.step }, pending));
      pending = { steps: [], evals: [], samples: [] };
    }
    function after(r) {
      busy = false;
      pending.steps.push([tr.step, r.loss, r.gradNorm, r.lr]);
      if (!Number.isFinite(r.loss)) playing = false;
      const ev = options().evalEvery || tr.t.evalEvery, se = options().sampleEvery || 250;
      if (tr.step % ev === 0 || tr.step === tr.t.steps) pending.evals.push(evalRecord());
      if (tr.step % se === 0 || tr.step === tr.t.steps) pending.samples.push(sample());
      if (tr.step >= tr.t.steps) playing = false;
    }
    function stepSplit(done) {
      const k = tr.step, Bt = tr.t.batch, h = Bt >> 1, mine = gen;
      helper.postMessage({ cmd: "half", gen, k, b0: h, b1: Bt, w: tr.w });
      const l1 = tr.partial(k, 0, h, tr.w, tr.g);
      helperReply = (reply) => {
        if (reply.gen !== mine || tr === null) return;
        const g = tr.g, g2 = reply.g;
        for (let i = 0; i < g.length; i++) g[i] = (g[i] * h + g2[i] * (Bt - h)) / Bt;
        done(tr.apply((l1 * h + reply.loss * (Bt - h)) / Bt));
      };
    }
    function advance() {
      timer = null;
      if (!playing || busy || tr.step >= tr.t.steps) return;
      if (helper !== null && tr.t.batch > 1) { // one update per task: the helper's reply resumes
        busy = true;
        stepSplit((r) => {
          after(r);
          flush(!playing);
          if (playing) { if (speed > 0) timer = setTimeout(advance, 1000 / speed); else advance(); }
        });
        return;
      }
      const t0 = Date.now();
      do { busy = true; after(tr.update()); } while (playing && speed === 0 && Date.now() - t0 < 40);
      flush(!playing);
      if (playing) { if (speed > 0) timer = setTimeout(advance, 1000 / speed); else soon(); }
    }
    function start() {
      gen += 1;
      busy = false;
      if (timer !== null) clearTimeout(timer);
      timer = null;
      tr = new Trainer(setup(setupData.series, setupData.options));
      if (helper !== null) helper.postMessage({ cmd: "helper-init", series: setupData.series, options: setupData.options });
      times.length = 0;
      pending = { steps: [], evals: [], samples: [] };
      post({ kind: "ready", exact: tr.s.exact, steps: tr.t.steps, evals: [evalRecord()], samples: [sample()],
        split: helper !== null, config: { model: tr.m, train: tr.t } });
    }
    function serveHelper(port) { // the second worker: half of every batch
      let htr = null;
      port.onmessage = (e) => {
        const m = e.data;
        if (m.cmd === "helper-init") htr = new Trainer(setup(m.series, m.options));
        else if (m.cmd === "half" && htr !== null) {
          const loss = htr.partial(m.k, m.b0, m.b1, m.w, htr.g);
          port.postMessage({ gen: m.gen, loss, g: htr.g });
        }
      };
    }
    return function onMessage(msg) {
      if (msg.cmd === "helper") { serveHelper(msg.port); return; }
      if (msg.cmd === "port") { helper = msg.port; helper.onmessage = (e) => helperReply && helperReply(e.data); return; }
      if (msg.cmd === "init") { setupData = { series: msg.series, options: msg.options || {} }; start(); return; }
      if (!tr) return;
      if (msg.cmd === "play") { playing = true; if (!busy) advance(); }
      else if (msg.cmd === "pause") { playing = false; if (!busy) flush(true); }
      else if (msg.cmd === "step") { if (!busy && !playing && tr.step < tr.t.steps) advanceOne(); }
      else if (msg.cmd === "reset") { playing = false; start(); }
      else if (msg.cmd === "speed") { speed = Number(msg.value) || 0; }
    };
    function advanceOne() {
      busy = true;
      if (helper !== null && tr.t.batch > 1) stepSplit((r) => { after(r); flush(true); });
      else { after(tr.update()); flush(true); }
    }
  }

  return { erf, gelu, geluGrad, lrAt, layout, setup, Trainer, Net, service, weightsFromBits, MODEL, TRAIN };
}

(() => {
  const NS = "http://www.w3.org/2000/svg";
  const SPEEDS = [["max", 0], ["100 steps/s", 100], ["20 steps/s", 20]];
  let workerUrl = null;

  function makeEngine(onReply, split) {
    // Web Workers built from this script's own core (a Blob: file:// pages cannot load worker
    // files): one trains, a second computes half of every batch; else the same service on the page
    try {
      if (workerUrl === null) {
        const src = `${decoderCore.toString()}\nconst serve = decoderCore().service((m) => self.postMessage(m));\n` +
          "self.onmessage = (e) => serve(e.data);\n";
        workerUrl = URL.createObjectURL(new Blob([src], { type: "text/javascript" }));
      }
      const worker = new Worker(workerUrl);
      worker.onmessage = (e) => onReply(e.data);
      let helper = null;
      if (split) {
        helper = new Worker(workerUrl);
        const channel = new MessageChannel();
        helper.postMessage({ cmd: "helper", port: channel.port2 }, [channel.port2]);
        worker.postMessage({ cmd: "port", port: channel.port1 }, [channel.port1]);
      }
      return { kind: "worker", send: (m) => worker.postMessage(m),
        stop: () => { worker.terminate(); if (helper) helper.terminate(); } };
    } catch (err) {
      const serve = decoderCore().service((m) => setTimeout(() => onReply(m), 0));
      return { kind: "page", send: (m) => serve(m), stop: () => serve({ cmd: "pause" }) };
    }
  }

  function el(tag, attrs, parent, text) {
    const e = tag.startsWith("svg:") ? document.createElementNS(NS, tag.slice(4)) : document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
    if (text != null) e.textContent = text;
    if (parent) parent.appendChild(e);
    return e;
  }

  function fmt(v, digits) { return Number.isFinite(v) ? v.toFixed(digits) : "–"; }

  const CORE = decoderCore();

  class DecoderTrainer extends HTMLElement {
    static get observedAttributes() {
      return ["run", "d-model", "context", "heads", "layers", "lr", "steps", "batch", "warmup", "eval-every",
        "sample-every", "prompt", "temperature", "seed", "threads", "print-state"];
    }

    /** The computation (erf, lrAt, Trainer, ...): the same code the Worker runs. */
    static get core() { return CORE; }

    constructor() {
      super();
      this.engine = null;
      this.built = false;
    }

    connectedCallback() { this.render(); }

    disconnectedCallback() { if (this.engine) this.engine.stop(); this.engine = null; }

    attributeChangedCallback(name, before, after) {
      if (this.built && before !== after) this.render();
    }

    num(name) {
      const v = this.getAttribute(name);
      return v === null || v === "" ? null : Number(v);
    }

    series() {
      const runs = window.SLIDEGEN_RUNS || {}, id = this.getAttribute("run") || "ch01.trainer";
      return runs[id] && runs[id].series ? runs[id].series : null;
    }

    options(chars) {
      const prompt = this.getAttribute("prompt") ?? "HAMLET\n";
      const index = new Map((chars || []).map((c, i) => [c, i]));
      return { dModel: this.num("d-model"), context: this.num("context"), heads: this.num("heads"),
        layers: this.num("layers"), lr: this.num("lr"), steps: this.num("steps"), batch: this.num("batch"),
        warmup: this.num("warmup"), evalEvery: this.num("eval-every"), sampleEvery: this.num("sample-every"),
        temperature: this.num("temperature") ?? 0.8, seed: this.num("seed"),
        promptIds: Array.from(prompt).map((c) => (index.has(c) ? index.get(c) : (chars ? chars.length - 1 : 0))) };
    }

    render() {
      if (this.engine) { this.engine.stop(); this.engine = null; }
      this.built = true;
      this.textContent = "";
      const series = this.series();
      this.chars = series && series.vocab ? series.vocab.map((c) => String.fromCodePoint(c)) : null;
      const root = el("div", { class: "dt-root", tabindex: "0", role: "group",
        "aria-label": this.getAttribute("alt") || "a Decoder training live" }, this);
      this.root = root;
      const bar = el("div", { class: "dt-controls" }, root);
      this.buttons = {};
      for (const [key, label, title] of [["play", "Play", "play (space)"], ["step", "Step", "one step (.)"],
        ["reset", "Reset", "reset (r)"]]) {
        const b = el("button", { type: "button", class: `dt-${key}`, title }, bar, label);
        b.addEventListener("click", () => this.command(key));
        this.buttons[key] = b;
      }
      const speed = el("select", { class: "dt-speed", title: "speed" }, bar);
      for (const [label, value] of SPEEDS) el("option", { value: String(value) }, speed, label);
      speed.addEventListener("change", () => this.send({ cmd: "speed", value: Number(speed.value) }));
      this.speedSelect = speed;
      this.status = el("span", { class: "dt-status" }, bar);
      const body = el("div", { class: "dt-body" }, root);
      this.svg = el("svg:svg", { class: "dt-chart", viewBox: "0 0 640 250", preserveAspectRatio: "xMidYMid meet",
        role: "img", "aria-label": "loss curve" }, body);
      const side = el("dl", { class: "dt-readouts" }, body);
      this.readouts = {};
      for (const [key, label] of [["step", "step"], ["train", "training loss"], ["val", "validation loss"],
        ["lr", "learning rate"], ["norm", "gradient norm"], ["sps", "steps per second"]]) {
        el("dt", {}, side, label);
        this.readouts[key] = el("dd", { class: `dt-r-${key}` }, side, "–");
      }
      this.sampleBox = el("pre", { class: "dt-sample", "aria-label": "generated text" }, root);
      root.addEventListener("keydown", (e) => this.onKey(e));
      this.reset();
      // print-state: the Python run's recorded state is drawn first (the static picture); the first
      // Play, Step or Reset clears it and trains here
      const state = this.getAttribute("print-state");
      this.showingPrint = false;
      this.ready = null;
      if (state) this.showingPrint = this.printState(state, series);
      if (!series) { this.status.textContent = "no run data (SLIDEGEN_RUNS) on this page"; return; }
      const threads = this.num("threads");
      this.engine = makeEngine((m) => this.onReply(m), threads === null ? (navigator.hardwareConcurrency || 1) > 1 : threads > 1);
      this.send({ cmd: "init", series, options: this.options(this.chars) });
      this.send({ cmd: "speed", value: Number(speed.value) });
    }

    reset() {
      this.steps = []; this.evals = []; this.samples = []; this.playing = false; this.total = 2000; this.sps = 0;
      this.smooth = 10; // the training curve: a running mean of this many updates
      this.drawChart();
    }

    send(m) { if (this.engine) this.engine.send(m); }

    command(key) {
      if (this.showingPrint) { // leave the recorded picture for the live run
        this.showingPrint = false;
        if (this.ready !== null) this.onReply(this.ready);
      }
      if (key === "play") this.send({ cmd: this.playing ? "pause" : "play" });
      else if (key === "step") this.send({ cmd: "step" });
      else if (key === "reset") { this.reset(); this.send({ cmd: "reset" }); }
      if (key === "play") { this.playing = !this.playing; this.update(); }
    }

    onKey(e) {
      const map = { " ": "play", k: "play", ".": "step", r: "reset" };
      if (!(e.key in map)) return;
      e.stopPropagation();
      e.preventDefault();
      this.command(map[e.key]);
    }

    onReply(m) {
      if (m.kind === "ready" && this.showingPrint) { this.ready = m; return; } // keep the picture until asked
      if (m.kind === "ready") {
        this.reset();
        this.total = m.steps;
        this.exact = m.exact;
      } else {
        for (const s of m.steps) this.steps.push(s);
        this.playing = m.playing;
        this.sps = m.sps;
      }
      for (const e of m.evals) this.evals.push([e.step, e.val]);
      for (const s of m.samples) this.samples.push(s);
      this.update();
      this.dispatchEvent(new CustomEvent("progress", { detail: { step: this.step() } }));
    }

    step() { return this.steps.length ? this.steps[this.steps.length - 1][0] : 0; }

    /** The mean training loss of the last (up to) 10 updates. */
    trainLoss() {
      const tail = this.steps.slice(-10);
      return tail.length ? tail.reduce((a, s) => a + s[1], 0) / tail.length : NaN;
    }

    update() {
      const last = this.steps[this.steps.length - 1];
      const r = this.readouts;
      r.step.textContent = `${this.step()} / ${this.total}`;
      r.train.textContent = fmt(this.trainLoss(), 3);
      r.val.textContent = this.evals.length ? fmt(this.evals[this.evals.length - 1][1], 3) : "–";
      r.lr.textContent = last ? last[3].toExponential(2) : "–";
      r.norm.textContent = last ? fmt(last[2], 3) : "–";
      r.sps.textContent = this.playing ? fmt(this.sps, 0) : "–";
      this.buttons.play.textContent = this.playing ? "Pause" : "Play";
      this.status.textContent = this.exact === false ? "this config is not in the run: its own start and batches" : "";
      const s = this.samples[this.samples.length - 1];
      if (s && this.chars) this.showSample(s.step, s.ids);
      this.drawChart();
    }

    /** The sample after `step` updates: the prompt (muted), then the model's characters; line breaks as " / ". */
    showSample(step, ids, promptIds) {
      const box = this.sampleBox, text = (s) => s.replace(/\n/g, " / ");
      const prompt = promptIds ? promptIds.map((i) => this.chars[i]).join("") : (this.getAttribute("prompt") ?? "HAMLET\n");
      box.textContent = "";
      el("span", { class: "dt-sample-step" }, box, `step ${step}  `);
      el("span", { class: "dt-prompt" }, box, text(prompt));
      box.appendChild(document.createTextNode(text(ids.map((i) => this.chars[i]).join(""))));
    }

    /** A static state drawn from the Python run the series holds ("finished" or "step=N"). */
    printState(state, series) {
      if (!series || !series.step) { this.status.textContent = "no run data for print-state"; return false; }
      const m = /^step=(\d+)$/.exec(state.trim());
      const upto = m ? Number(m[1]) : Infinity;
      const steps = series.step, keep = steps.map((s, i) => i).filter((i) => steps[i] <= upto);
      this.total = steps[steps.length - 1];
      this.smooth = 1; // the recorded training loss is already a mean since the previous evaluation
      this.evals = keep.map((i) => [steps[i], series.val_loss[i]]);
      this.steps = keep.filter((i) => steps[i] > 0).map((i) => [steps[i], series.train_loss[i], series.grad_norm[i], series.lr[i]]);
      const last = keep[keep.length - 1];
      const r = this.readouts;
      r.step.textContent = `${steps[last]} / ${this.total}`;
      r.train.textContent = fmt(series.train_loss[last], 3);
      r.val.textContent = fmt(series.val_loss[last], 3);
      r.lr.textContent = steps[last] > 0 ? series.lr[last].toExponential(2) : "–";
      r.norm.textContent = steps[last] > 0 ? fmt(series.grad_norm[last], 3) : "–";
      r.sps.textContent = "–";
      if (series.sample_ids && this.chars && upto >= this.total) {
        this.showSample(this.total, series.sample_ids, series.prompt_ids);
      }
      this.status.textContent = `the recorded run (Python, seed ${series.seed ? series.seed[0] : 0}); Play trains it here`;
      this.drawChart();
      return true;
    }

    drawChart() {
      const svg = this.svg;
      if (!svg) return;
      while (svg.firstChild) svg.removeChild(svg.firstChild);
      const W = 640, H = 250, L = 58, R = 14, T = 12, Bm = 40, lo = 1.8, hi = 4.4, total = Math.max(1, this.total);
      const X = (s) => L + (W - L - R) * s / total;
      const Y = (v) => T + (H - T - Bm) * (hi - Math.min(hi, Math.max(lo, v))) / (hi - lo);
      const g = el("svg:g", { class: "dt-axes" }, svg);
      for (let v = 2; v <= 4; v += 0.5) {
        el("svg:line", { x1: L, x2: W - R, y1: Y(v), y2: Y(v), class: "dt-grid" }, g);
        el("svg:text", { x: L - 8, y: Y(v) + 5, "text-anchor": "end" }, g, v.toFixed(1));
      }
      for (let k = 0; k <= 4; k++) {
        const s = Math.round(total * k / 4);
        el("svg:text", { x: X(s), y: H - Bm + 20, "text-anchor": k === 4 ? "end" : k === 0 ? "start" : "middle" }, g, String(s));
      }
      el("svg:text", { x: (L + W - R) / 2, y: H - 3, "text-anchor": "middle", class: "dt-label" }, g, "step");
      el("svg:text", { x: 14, y: (T + H - Bm) / 2, "text-anchor": "middle", class: "dt-label",
        transform: `rotate(-90 14 ${(T + H - Bm) / 2})` }, g, "loss (nats)");
      const pts = [];
      const n = this.steps.length, every = Math.max(1, Math.ceil(n / 400));
      for (let i = 0; i < n; i += every) {
        const chunk = this.steps.slice(Math.max(0, i - this.smooth + 1), i + 1);
        pts.push(`${X(this.steps[i][0]).toFixed(1)},${Y(chunk.reduce((a, s) => a + s[1], 0) / chunk.length).toFixed(1)}`);
      }
      if (pts.length > 1) el("svg:polyline", { points: pts.join(" "), class: "dt-train" }, svg);
      const vp = this.evals.map(([s, v]) => `${X(s).toFixed(1)},${Y(v).toFixed(1)}`);
      if (vp.length > 1) el("svg:polyline", { points: vp.join(" "), class: "dt-val" }, svg);
      for (const [s, v] of this.evals) el("svg:circle", { cx: X(s), cy: Y(v), r: 4, class: "dt-val-dot" }, svg);
      const key = el("svg:g", { class: "dt-key" }, svg);
      const kx = W - R - 250, ky = T + 16;
      el("svg:line", { x1: kx, x2: kx + 30, y1: ky, y2: ky, class: "dt-train" }, key);
      el("svg:text", { x: kx + 36, y: ky + 5 }, key, "training");
      el("svg:line", { x1: kx + 120, x2: kx + 150, y1: ky, y2: ky, class: "dt-val" }, key);
      el("svg:text", { x: kx + 156, y: ky + 5 }, key, "validation");
    }
  }

  if (!customElements.get("decoder-trainer")) customElements.define("decoder-trainer", DecoderTrainer);
})();
