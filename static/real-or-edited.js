// The real-or-edited reading screen: r / e answer real or edited, Shift+1-5 the confidence
// (the same key for the same meaning in every design: on the rubric's screen the plain
// digits answer its questions), Enter submits, p or Backspace opens the
// case before, u undoes. Each key lights up what it changed; a submit with an answer missing
// names it and puts the focus there instead of sending the form. Time on case runs from the
// image shown to submit, paused while the tab is hidden.
(function () {
  "use strict";
  const root = document.getElementById("reading");
  const form = document.getElementById("answer-form");
  if (!root || !form) return;
  const summary = document.getElementById("missing-summary");

  let elapsed = 0;
  let since = null;
  let shown = false;
  const image = document.getElementById("shown-image");
  function start() { if (since === null && shown && !document.hidden) since = performance.now(); }
  function pause() { if (since !== null) elapsed += performance.now() - since; since = null; }
  function onShown() { shown = true; start(); }
  if (image.complete) onShown(); else image.addEventListener("load", onShown, { once: true });
  document.addEventListener("visibilitychange", () => (document.hidden ? pause() : start()));

  function light(input) {
    const box = input.closest("fieldset");
    if (box) { box.classList.remove("missing"); box.removeAttribute("aria-invalid"); }
    const label = input.closest("label");
    label.classList.remove("changed");
    void label.offsetWidth; // restart the animation when the same key is pressed twice
    label.classList.add("changed");
  }
  function choose(name, value) {
    const input = form.querySelector(`input[name="${name}"][value="${value}"]`);
    if (!input) return;
    input.checked = true;
    light(input);
    if (summary && !unanswered().length) summary.hidden = true;
  }
  function unanswered() {
    return Array.from(form.querySelectorAll("fieldset.choice")).filter((box) => !box.querySelector("input:checked"));
  }

  form.addEventListener("submit", (event) => {
    const open = unanswered();
    if (open.length) {
      event.preventDefault();
      open.forEach((box) => { box.classList.add("missing"); box.setAttribute("aria-invalid", "true"); });
      const names = open.map((box) => box.querySelector("legend").textContent.replace(/^[^A-Za-z]+/, "").trim());
      summary.textContent = `Not saved: still to answer ${names.join(", ")}.`;
      summary.hidden = false;
      open[0].querySelector("input").focus();
      return;
    }
    pause();
    form.querySelector('input[name="time_on_case_ms"]').value = String(Math.round(elapsed));
    document.getElementById("submit-answer").disabled = true;
  });
  form.addEventListener("change", (event) => {
    if (event.target instanceof HTMLInputElement && event.target.type === "radio") light(event.target);
  });

  window.MedBanana.keys.add("answers", (event) => {
    const digit = /^Digit([1-5])$/.exec(event.code);
    if (digit && event.shiftKey) choose("confidence", digit[1]);
    else if (event.key === "r") choose("call", "real");
    else if (event.key === "e") choose("call", "edited");
    else if (event.key === "Enter") form.requestSubmit();
    else if (event.key === "u") document.getElementById("undo-form").requestSubmit();
    else if ((event.key === "p" || event.key === "Backspace") && root.dataset.previous) {
      window.location.assign(root.dataset.previous);
    } else return false;
    return true;
  });
  const firstError = form.querySelector("fieldset[aria-invalid] input");
  if (firstError) firstError.focus();
})();
