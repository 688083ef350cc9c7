// <ema-window beta="0.999">: how many steps an exponential moving average with decay beta remembers,
// about 1 / (1 - beta). The slider sets beta between 0.9 and 0.9999; its attribute is the starting point.
// A slidegen component: one custom element named as its file, plain ES2020, no imports, no network.
customElements.define("ema-window", class extends HTMLElement {
  static get observedAttributes() { return ["beta"]; }

  // The window of a decay: what the slide and the picture in PowerPoint both show.
  static windowOf(beta) { return 1 / (1 - beta); }

  connectedCallback() {
    if (!this.slider) {
      this.slider = document.createElement("input");
      this.slider.type = "range";
      this.slider.min = "1";  // -log10(1 - beta): 1 is beta 0.9, 4 is beta 0.9999
      this.slider.max = "4";
      this.slider.step = "0.01";
      this.slider.setAttribute("aria-label", "decay beta");
      this.readout = document.createElement("output");
      this.append(this.slider, this.readout);
      this.slider.addEventListener("input", () => this.draw(1 - Math.pow(10, -Number(this.slider.value))));
      this.addEventListener("keydown", (event) => event.stopPropagation());  // arrow keys move the slider
    }
    this.reset();
  }

  attributeChangedCallback() { if (this.slider) this.reset(); }

  reset() {
    const beta = Number(this.getAttribute("beta") || 0.99);
    this.slider.value = String(-Math.log10(1 - beta));
    this.draw(beta);
  }

  draw(beta) {
    const steps = Math.round(this.constructor.windowOf(beta));
    this.readout.textContent = `β = ${Number(beta.toFixed(4))} averages over about ${steps.toLocaleString("en")} steps`;
  }
});
