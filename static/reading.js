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

  // Draft saves: one at a time, each numbered (its edition), so that an older save can never
  // overwrite a newer one here or on the server (which refuses an older edition: a page's
  // last save on leaving can still be in flight when the next page saves). "draft saved" is
  // said only by the save that carried the latest change.
  let timer = null;
  let submitted = false;
  let changes = 0;      // each change to the form
  let sent = 0;         // the change the latest save carried
  let edition = 0;
  let inFlight = false;
  let again = false;    // a change came while a save was in flight: save once it answers
  function tell(carried, text) { if (carried === changes) status.textContent = text; }
  async function saveDraft(keepalive) {
    clearTimeout(timer);
    timer = null;
    if (submitted) return;
    if (inFlight && !keepalive) { again = true; return; }
    const carried = changes;
    sent = carried;
    edition = Math.max(Date.now(), edition + 1);
    const body = JSON.stringify(Object.assign(payload(), { edition: edition }));
    const request = fetch(root.dataset.draftUrl, {
      method: "PUT", keepalive: Boolean(keepalive), credentials: "same-origin",
      headers: { "Content-Type": "application/json", "X-CSRF-Token": csrf }, body: body,
    });
    if (keepalive) return;  // the page is going: nothing here is left to tell
    inFlight = true;
    try {
      const response = await request;
      tell(carried, response.ok ? "draft saved" : `draft NOT saved (${response.status})`);
    } catch (error) {
      tell(carried, "draft NOT saved (offline?)");
    }
    inFlight = false;
    if (again) { again = false; saveDraft(); }
  }
  function scheduleSave() {
    changes += 1;
    status.textContent = "unsaved changes";
    clearTimeout(timer);
    timer = setTimeout(saveDraft, 400);
  }
  form.addEventListener("change", scheduleSave);
  form.querySelector("textarea").addEventListener("input", scheduleSave);
  // Leaving with a change unsent, or with its save still in flight (a navigation may cancel
  // it): the latest state goes with keepalive, and its edition wins on the server.
  window.addEventListener("pagehide", () => { if (sent < changes || inFlight) saveDraft(true); });

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
