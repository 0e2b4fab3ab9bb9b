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

  window.MedBanana.keys = { add };
})();
