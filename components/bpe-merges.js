// <bpe-merges>: byte-pair encoding learnt live, one merge at a time.
//
//   <bpe-merges text="To be, or not to be" merges="20" print-state="step=6" alt="..."></bpe-merges>
//
// The audience picks or types a text and steps through the merges: each step shows
// the pair merged, how often it occurred, the vocabulary and the text's segmentation.
// The computation is model/bpe.py's, exposed as static methods so a test can compare:
//   customElements.get("bpe-merges").train(text, n)    -> [{a, b, count}, ...]
//   customElements.get("bpe-merges").encode(text, merges) -> ["To", " be", ...]
// Chunks as in bpe.py (a word with its leading space, punctuation with its leading
// space, or a run of whitespace); the most frequent adjacent pair is merged; ties go
// to the smallest pair in code-point order.

(() => {
  // Python's \s (str.isspace) and \w (alphanumeric or underscore), for the same chunks
  const SPACE = "\\t\\n\\x0b\\x0c\\r\\x1c-\\x1f \\x85\\xa0\\u1680\\u2000-\\u200a\\u2028\\u2029\\u202f\\u205f\\u3000";
  const WORD = "\\p{L}\\p{N}_";
  const CHUNK = new RegExp(` ?[${WORD}]+| ?[^${SPACE}${WORD}]+|[${SPACE}]+`, "gu");

  const PRESETS = [
    ["Hamlet", "To be, or not to be: that is the question:\nWhether 'tis nobler in the mind to suffer"],
    ["low, lower, newest", "low low low low low lower lower newest newest newest newest newest newest widest widest widest"],
    ["the cat", "the cat sat on the mat; the hat is on the cat."],
  ];
  const MAX_MERGES = 200;

  // compare two strings by code points, as Python compares str
  function cmpStr(x, y) {
    const a = Array.from(x, (c) => c.codePointAt(0));
    const b = Array.from(y, (c) => c.codePointAt(0));
    for (let i = 0; i < Math.min(a.length, b.length); i++) {
      if (a[i] !== b[i]) return a[i] < b[i] ? -1 : 1;
    }
    return a.length - b.length;
  }

  function mergePair(symbols, a, b) {
    const out = [];
    let i = 0;
    while (i < symbols.length) {
      if (i + 1 < symbols.length && symbols[i] === a && symbols[i + 1] === b) {
        out.push(a + b);
        i += 2;
      } else {
        out.push(symbols[i]);
        i += 1;
      }
    }
    return out;
  }

  function show(token) {
    return token.replace(/ /g, "\u00b7").replace(/\n/g, "\u21b5").replace(/\t/g, "\u21e5");
  }

  class BpeMerges extends HTMLElement {
    static get observedAttributes() {
      return ["text", "merges", "print-state"];
    }

    static chunks(text) {
      return text.match(CHUNK) || [];
    }

    static mergePair(symbols, a, b) {
      return mergePair(symbols, a, b);
    }

    // `n` merges in the order learnt, each with its count when chosen (fewer if the pairs run out)
    static train(text, n) {
      const freq = new Map();
      for (const c of BpeMerges.chunks(text)) freq.set(c, (freq.get(c) || 0) + 1);
      let words = [...freq.keys()].map((w) => Array.from(w));
      const counts = [...freq.values()];
      const merges = [];
      while (merges.length < n) {
        const pairs = new Map(); // "a\u0000b" is not safe for any text, so key by index
        const list = [];
        words.forEach((w, i) => {
          for (let j = 0; j + 1 < w.length; j++) {
            const key = JSON.stringify([w[j], w[j + 1]]);
            let k = pairs.get(key);
            if (k === undefined) {
              k = list.length;
              pairs.set(key, k);
              list.push({ a: w[j], b: w[j + 1], count: 0 });
            }
            list[k].count += counts[i];
          }
        });
        if (list.length === 0) break;
        let best = list[0];
        for (const p of list) {
          const order = cmpStr(p.a, best.a) || cmpStr(p.b, best.b);
          if (p.count > best.count || (p.count === best.count && order < 0)) best = p;
        }
        merges.push(best);
        words = words.map((w) => mergePair(w, best.a, best.b));
      }
      return merges;
    }

    // tokens of `text` under `merges` ([{a, b}] or [[a, b]]): each chunk merged lowest rank first
    static encode(text, merges) {
      const rank = new Map();
      merges.forEach((m, r) => {
        const key = JSON.stringify(Array.isArray(m) ? m : [m.a, m.b]);
        if (!rank.has(key)) rank.set(key, r);
      });
      const none = rank.size;
      const cache = new Map();
      const tokens = [];
      for (const chunk of BpeMerges.chunks(text)) {
        if (!cache.has(chunk)) {
          let w = Array.from(chunk);
          while (w.length > 1) {
            let best = null;
            let bestRank = none;
            for (let j = 0; j + 1 < w.length; j++) {
              const r = rank.get(JSON.stringify([w[j], w[j + 1]]));
              if (r !== undefined && r < bestRank) {
                bestRank = r;
                best = [w[j], w[j + 1]];
              }
            }
            if (best === null) break;
            w = mergePair(w, best[0], best[1]);
          }
          cache.set(chunk, w);
        }
        tokens.push(...cache.get(chunk));
      }
      return tokens;
    }

    constructor() {
      super();
      this.step = 0;
      this.merges = [];
      this.text = "";
      this.built = false;
    }

    connectedCallback() {
      if (!this.built) this.build();
      this.load(this.getAttribute("text") || PRESETS[0][1]);
      this.applyPrintState();
      this.render();
    }

    attributeChangedCallback(name) {
      if (!this.built) return;
      if (name === "text") this.load(this.getAttribute("text") || "");
      if (name === "merges") this.load(this.text);
      if (name === "print-state") this.applyPrintState();
      this.render();
    }

    maxMerges() {
      const n = Number(this.getAttribute("merges") || 20);
      return Number.isFinite(n) ? Math.max(0, Math.min(MAX_MERGES, Math.floor(n))) : 20;
    }

    applyPrintState() {
      const state = this.getAttribute("print-state") || "";
      const m = /step\s*=\s*(\d+)/.exec(state);
      if (m) this.step = Math.min(Number(m[1]), this.merges.length);
    }

    load(text) {
      this.text = text;
      this.merges = BpeMerges.train(text, this.maxMerges());
      this.step = Math.min(this.step, this.merges.length);
      if (this.input && this.input.value !== text) this.input.value = text;
      if (this.select) {
        const i = PRESETS.findIndex(([, t]) => t === text);
        this.select.selectedIndex = i < 0 ? PRESETS.length : i;
      }
    }

    el(tag, cls, text) {
      const e = document.createElement(tag);
      if (cls) e.className = cls;
      if (text !== undefined) e.textContent = text;
      return e;
    }

    build() {
      this.built = true;
      this.textContent = "";
      const root = this.el("div", "bpe-root");
      root.tabIndex = 0;
      root.setAttribute("role", "group");
      root.setAttribute("aria-label", this.getAttribute("alt") || "BPE merges, step by step");

      const top = this.el("div", "bpe-top");
      this.select = this.el("select", "bpe-preset");
      this.select.setAttribute("aria-label", "example text");
      for (const [name] of PRESETS) this.select.append(this.el("option", "", name));
      this.select.append(this.el("option", "", "your text"));
      this.select.addEventListener("change", () => {
        const i = this.select.selectedIndex;
        if (i < PRESETS.length) {
          this.step = 0;
          this.load(PRESETS[i][1]);
          this.render();
        } else {
          this.input.focus();
        }
      });
      this.input = this.el("textarea", "bpe-input");
      this.input.rows = 2;
      this.input.spellcheck = false;
      this.input.setAttribute("aria-label", "text to learn merges on");
      this.input.addEventListener("input", () => {
        this.select.selectedIndex = PRESETS.length;
        this.step = 0;
        this.load(this.input.value);
        this.render();
      });
      this.input.addEventListener("keydown", (e) => e.stopPropagation()); // typing never moves the slide
      top.append(this.select, this.input);

      const controls = this.el("div", "bpe-controls");
      const button = (label, title, fn) => {
        const b = this.el("button", "bpe-btn", label);
        b.type = "button";
        b.title = title;
        b.addEventListener("click", () => {
          fn();
          this.render();
        });
        controls.append(b);
        return b;
      };
      this.resetBtn = button("reset", "no merges (Home)", () => (this.step = 0));
      this.backBtn = button("\u25c0 back", "undo the last merge (left arrow)", () => (this.step = Math.max(0, this.step - 1)));
      this.stepBtn = button("step \u25b6", "merge the most frequent pair (right arrow)", () => (this.step = Math.min(this.merges.length, this.step + 1)));
      this.allBtn = button("all \u25b6\u25b6", "every merge (End)", () => (this.step = this.merges.length));
      this.status = this.el("div", "bpe-status");
      this.status.setAttribute("aria-live", "polite");
      controls.append(this.status);

      const body = this.el("div", "bpe-body");
      this.seg = this.el("div", "bpe-seg");
      const side = this.el("div", "bpe-side");
      this.stats = this.el("div", "bpe-stats");
      this.list = this.el("ol", "bpe-list");
      side.append(this.stats, this.list);
      body.append(this.seg, side);

      root.append(top, controls, body);
      root.addEventListener("keydown", (e) => {
        if (e.target === this.input || e.target === this.select) return;
        const moves = {
          ArrowRight: () => Math.min(this.merges.length, this.step + 1),
          ArrowLeft: () => Math.max(0, this.step - 1),
          Home: () => 0,
          End: () => this.merges.length,
        };
        if (moves[e.key]) {
          e.stopPropagation();
          e.preventDefault();
          this.step = moves[e.key]();
          this.render();
        }
      });
      this.append(root);
    }

    render() {
      if (!this.built) return;
      const k = this.step;
      const merges = this.merges.slice(0, k);
      const tokens = BpeMerges.encode(this.text, merges);
      const chars = Array.from(this.text).length;
      const base = new Set(Array.from(this.text)).size;
      const last = k > 0 ? this.merges[k - 1] : null;
      const made = last ? last.a + last.b : null;

      if (last) {
        this.status.textContent = `merge ${k} of ${this.merges.length}: \u201c${show(last.a)}\u201d + \u201c${show(last.b)}\u201d \u2192 \u201c${show(made)}\u201d, ${last.count} times`;
      } else {
        this.status.textContent = `no merges yet: ${this.merges.length} to learn`;
      }
      this.resetBtn.disabled = this.backBtn.disabled = k === 0;
      this.stepBtn.disabled = this.allBtn.disabled = k >= this.merges.length;

      this.seg.textContent = "";
      for (const t of tokens) {
        const span = this.el("span", t === made ? "bpe-tok bpe-new" : "bpe-tok", show(t));
        this.seg.append(span);
        if (t.endsWith("\n")) this.seg.append(document.createElement("br"));
      }

      this.stats.textContent = "";
      const stat = (label, value) => {
        const row = this.el("div", "bpe-stat");
        row.append(this.el("span", "bpe-label", label), this.el("span", "bpe-value", value));
        this.stats.append(row);
      };
      stat("vocabulary", `${base} + ${k} = ${base + k}`);
      stat("tokens", `${tokens.length}`);
      stat("characters per token", tokens.length ? (chars / tokens.length).toFixed(2) : "\u2013");

      this.list.textContent = "";
      const first = Math.max(0, k - 6); // the latest merges, so the list never overflows
      this.list.start = first + 1;
      merges.slice(first).forEach((m, i) => {
        const li = this.el("li", first + i === k - 1 ? "bpe-merge bpe-current" : "bpe-merge");
        li.append(this.el("code", "", show(m.a)), " + ", this.el("code", "", show(m.b)), this.el("span", "bpe-count", ` \u00d7${m.count}`));
        this.list.append(li);
      });
    }
  }

  customElements.define("bpe-merges", BpeMerges);
})();
