// One keydown listener for every screen. Whether the user is typing is decided once, here;
// then the screens' key handlers are asked in a fixed order (a two-key command in progress,
// the image viewer, the answer form, then the page's own navigation) and the first that takes a key ends it.
window.MedBanana = window.MedBanana || {};
(function () {
  "use strict";
  // "mode": a two-key command in progress (t then a letter) takes the next key before anyone.
  const ORDER = { mode: 0, viewer: 10, answers: 20, page: 30 };
  const layers = [];

  // Typing: a text field, a text area, a select or editable text. Radio buttons, check
  // boxes, sliders and buttons are not typing: the keys still work when one has the focus.
  function typing(el) {
    if (!(el instanceof HTMLElement)) return false;
    if (el.isContentEditable || el.tagName === "TEXTAREA" || el.tagName === "SELECT") return true;
    return el.tagName === "INPUT" && !/^(radio|checkbox|range|button|submit|reset)$/.test(el.type);
  }

  // handle(event) returns true when it took the key.
  function add(layer, handle) {
    layers.push({ order: ORDER[layer], handle });
    layers.sort((a, b) => a.order - b.order);
  }

  document.addEventListener("keydown", (event) => {
    // A modal dialog (the study's instructions) has the keys: Enter and Esc close it, and
    // nothing behind it is answered while it is open.
    if (document.querySelector("dialog[open]:modal")) return;
    if (typing(event.target)) {
      if (event.key === "Escape") event.target.blur(); // keys go back to the screen
      return;
    }
    if (event.metaKey || event.ctrlKey || event.altKey) return;
    for (const layer of layers) {
      if (layer.handle(event)) { event.preventDefault(); return; }
    }
  });

  // "t then a letter" ticks or unticks a reason: a two-key command, so the letter is taken
  // in the "mode" layer, before the image viewer, which owns several letters (i, c, l, f).
  // onTick(input) is told of each box a key changed. Returns arm(), for the screen's "t".
  function reasons(form, onTick) {
    const box = form.querySelector("#tags");
    const hint = form.querySelector("#tag-mode-hint");
    let armed = false;
    function set(on) {
      armed = on;
      if (box) box.classList.toggle("armed", on);
      if (hint) hint.hidden = !on;
    }
    add("mode", (event) => {
      if (!armed) return false;
      set(false);
      const label = /^[a-z]$/.test(event.key) ? box.querySelector(`label[data-tag-key="${event.key}"]`) : null;
      if (label) {
        const input = label.querySelector("input");
        input.checked = !input.checked;
        onTick(input);
      }
      return true; // any other key, Escape included, just leaves the mode
    });
    return box ? () => set(true) : null;
  }

  window.MedBanana.keys = { add, reasons };
})();
