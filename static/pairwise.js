// The pairwise reading screen: a / b say which edit is better, e both acceptable and equal,
// n both unacceptable, Shift+1-5 the confidence, t then a letter ticks a reason, m writes a
// comment, Enter submits, p or Backspace opens the pair before, u undoes. Each key lights up
// what it changed; a submit with an answer missing names it and focuses it instead of
// sending the form. Time on case runs from both edits shown to submit, paused while hidden.
(function () {
  "use strict";
  const root = document.getElementById("reading");
  const form = document.getElementById("answer-form");
  if (!root || !form) return;
  const summary = document.getElementById("missing-summary");
  const tagBox = form.querySelector("#tags");
  const tagHint = form.querySelector("#tag-mode-hint");
  const comment = form.querySelector('textarea[name="comment"]');
  let tagMode = false;

  let elapsed = 0;
  let since = null;
  let loaded = 0;
  const images = ["img-a", "img-b"].map((id) => document.getElementById(id));
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
  function setTagMode(on) {
    tagMode = on;
    if (tagBox) tagBox.classList.toggle("armed", on);
    if (tagHint) tagHint.hidden = !on;
  }

  form.addEventListener("submit", (event) => {
    const open = unanswered();
    if (open.length) {
      event.preventDefault();
      open.forEach((box) => { box.classList.add("missing"); box.setAttribute("aria-invalid", "true"); });
      const names = open.map((box) => box.dataset.label);
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
    if (event.target instanceof HTMLInputElement) light(event.target);
  });
  if (comment) comment.addEventListener("keydown", (event) => {
    if (event.key === "Escape") { comment.blur(); event.stopPropagation(); }
  });

  window.MedBanana.keys.add("answers", (event) => {
    if (tagMode) {
      setTagMode(false);
      const label = tagBox && /^[a-z]$/.test(event.key)
        ? tagBox.querySelector(`label[data-tag-key="${event.key}"]`) : null;
      if (label) {
        const box = label.querySelector("input");
        box.checked = !box.checked;
        light(box);
      }
      return true;
    }
    const digit = /^Digit([1-5])$/.exec(event.code);
    if (digit && event.shiftKey) choose("confidence", digit[1]);
    else if (event.key === "a") choose("call", "a");
    else if (event.key === "b") choose("call", "b");
    else if (event.key === "e") choose("call", "equal");
    else if (event.key === "n") choose("call", "neither");
    else if (event.key === "t" && tagBox) setTagMode(true);
    else if (event.key === "m" && comment) { event.preventDefault(); comment.focus(); }
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
