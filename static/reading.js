// The reading screen: keys, draft autosave, and time on case (only while the tab is visible).
// The answer panel's own keys and checks are static/answer-keys.js.
(function () {
  "use strict";
  const root = document.getElementById("reading");
  const form = document.getElementById("answer-form");
  if (!root || !form) return;
  const csrf = form.querySelector('input[name="csrf_token"]').value;
  const status = document.getElementById("draft-status");
  const FIELDS = ["compliance", "structure", "realism", "fidelity", "overall", "confidence", "comment", "roi", "tool_use"];

  // Time on case: from both images shown to submit, paused while the tab is hidden.
  let elapsed = Number(root.dataset.elapsed) || 0;
  let since = null;
  let imagesShown = false;
  const running = () => (since === null ? 0 : performance.now() - since);
  const total = () => Math.round(elapsed + running());
  function start() { if (since === null && imagesShown && !document.hidden) since = performance.now(); }
  function pause() { elapsed += running(); since = null; }
  const images = Array.from(root.querySelectorAll(".reading-panes img"));
  Promise.all(images.map((img) => (img.complete ? Promise.resolve() : new Promise((done) => {
    img.addEventListener("load", done, { once: true });
    img.addEventListener("error", done, { once: true });
  })))).then(() => { imagesShown = true; start(); });
  document.addEventListener("visibilitychange", () => (document.hidden ? pause() : start()));

  // Tool use: what an earlier visit to this case recorded (the draft), plus this visit's.
  const toolInput = document.getElementById("tool-use-input");
  let earlierUse = {};
  try { earlierUse = JSON.parse(toolInput.value || "{}") || {}; } catch (error) { earlierUse = {}; }
  function toolUse() {
    const now = window.MedBanana.viewer ? window.MedBanana.viewer.toolUse() : {};
    const sum = {};
    new Set([...Object.keys(earlierUse), ...Object.keys(now)]).forEach((tool) => {
      const a = earlierUse[tool] || { uses: 0, ms: 0 }, b = now[tool] || { uses: 0, ms: 0 };
      sum[tool] = { uses: a.uses + b.uses, ms: a.ms + b.ms };
    });
    return Object.keys(sum).length ? JSON.stringify(sum) : "";
  }

  function payload() {
    toolInput.value = toolUse();
    const data = new FormData(form);
    const state = { tags: data.getAll("tags"), submission_id: data.get("submission_id"), elapsed_ms: total() };
    FIELDS.forEach((name) => { if (data.get(name) !== null) state[name] = data.get(name); });
    return state;
  }

  let timer = null;
  let submitted = false;
  async function saveDraft(keepalive) {
    if (submitted) return;
    try {
      const response = await fetch(root.dataset.draftUrl, {
        method: "PUT", keepalive: Boolean(keepalive), credentials: "same-origin",
        headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf },
        body: JSON.stringify(payload()),
      });
      status.textContent = response.ok ? "draft saved" : `draft NOT saved (${response.status})`;
    } catch (error) {
      status.textContent = "draft NOT saved (offline?)";
    }
  }
  function scheduleSave() {
    status.textContent = "unsaved changes";
    clearTimeout(timer);
    timer = setTimeout(saveDraft, 400);
  }
  form.addEventListener("change", scheduleSave);
  form.querySelector("textarea").addEventListener("input", scheduleSave);
  window.addEventListener("pagehide", () => { if (timer) saveDraft(true); });

  form.addEventListener("submit", (event) => {
    if (submitted) { event.preventDefault(); return; }
    submitted = true;
    clearTimeout(timer);
    form.querySelector('input[name="time_on_case_ms"]').value = String(total());
    toolInput.value = toolUse();
    document.getElementById("submit-answer").disabled = true;
  });

  window.MedBanana.answerKeys(form, scheduleSave, (event, choose) => {
    const digit = /^Digit([1-5])$/.exec(event.code);
    if (event.shiftKey && digit) choose("confidence", digit[1]);
    else if (event.key === "u") document.getElementById("undo-form").requestSubmit();
    else if (event.key === "g" && document.getElementById("practice-next")) {
      // A practice case once its settled answer is shown: on to the next one.
      window.location.assign(document.getElementById("practice-next").href);
    }
    else if ((event.key === "p" || event.key === "Backspace") && root.dataset.previous) {
      window.location.assign(root.dataset.previous); // a pending draft is saved on pagehide
    }
    else return false;
    return true;
  });
})();
