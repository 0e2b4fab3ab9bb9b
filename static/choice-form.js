// What the answer screens of a few keys share (real or edited, pairwise): each key lights up
// what it changed, a submit with an answer missing names it and puts the focus there instead
// of sending the form, and the time on case runs from the images shown to submit, paused
// while the tab is hidden. Each screen's own script binds its keys to choose().
(function () {
  "use strict";
  window.MedBanana = window.MedBanana || {};
  window.MedBanana.choiceForm = function (form, images) {
    const summary = document.getElementById("missing-summary");
    let elapsed = 0;
    let since = null;
    let loaded = 0;
    function start() { if (since === null && loaded === images.length && !document.hidden) since = performance.now(); }
    function pause() { if (since !== null) elapsed += performance.now() - since; since = null; }
    images.forEach((image) => {
      const shown = () => { loaded += 1; start(); };
      if (image.complete) shown(); else image.addEventListener("load", shown, { once: true });
    });
    document.addEventListener("visibilitychange", () => (document.hidden ? pause() : start()));

    function light(input) {
      const box = input.closest("fieldset");
      if (box) { box.classList.remove("missing"); box.removeAttribute("aria-invalid"); }
      const label = input.closest("label");
      label.classList.remove("changed");
      void label.offsetWidth; // restart the animation when the same key is pressed twice
      label.classList.add("changed");
    }
    function unanswered() {
      return Array.from(form.querySelectorAll("fieldset.choice")).filter((box) => !box.querySelector("input:checked"));
    }
    function choose(name, value) {
      const input = form.querySelector(`input[name="${name}"][value="${value}"]`);
      if (!input) return;
      input.checked = true;
      light(input);
      if (summary && !unanswered().length) summary.hidden = true;
    }
    function named(box) {
      return box.dataset.label || box.querySelector("legend").textContent.replace(/^[^A-Za-z]+/, "").trim();
    }

    form.addEventListener("submit", (event) => {
      const open = unanswered();
      if (open.length) {
        event.preventDefault();
        open.forEach((box) => { box.classList.add("missing"); box.setAttribute("aria-invalid", "true"); });
        summary.textContent = `Not saved: still to answer ${open.map(named).join(", ")}.`;
        summary.hidden = false;
        open[0].querySelector("input").focus();
        return;
      }
      pause();
      form.querySelector('input[name="time_on_case_ms"]').value = String(Math.round(elapsed));
      document.getElementById("submit-answer").disabled = true;
    });
    form.addEventListener("change", (event) => {
      const input = event.target;
      if (input instanceof HTMLInputElement && (input.type === "radio" || input.type === "checkbox")) light(input);
    });
    const firstError = form.querySelector("fieldset[aria-invalid] input");
    if (firstError) firstError.focus();
    return { choose, light };
  };
})();
