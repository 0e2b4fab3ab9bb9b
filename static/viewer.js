// The image viewer of the case page and the reading screen: zoom and pan synchronised across
// panes (gestures by the vendored @panzoom/panzoom), window/level, flicker, swipe, the
// server's difference map as an overlay, a full-screen single pane, the original in every
// pane's place (o, where the panes carry it), and on the reading screen the reader's region
// of interest. Every key is listed in the page's `?` dialog.
(function () {
  "use strict";
  const root = document.querySelector("[data-viewer]");
  if (!root || typeof window.Panzoom !== "function") return;

  // These are 8-bit display images, not Hounsfield units: presets are shares of the range.
  const PRESETS = [
    { name: "full range", width: 1, level: 0.5 },
    { name: "dark detail", width: 0.5, level: 0.3 },
    { name: "bright detail", width: 0.5, level: 0.7 },
    { name: "narrow window", width: 0.25, level: 0.5 },
  ];
  const FULL_RES_SCALE = 1.5; // beyond this zoom a preview pixel would be enlarged: load the file
  const HOLD_MS = 350; // space held longer than this flickers back when released
  const greyscale = root.dataset.greyscale === "1";
  const digitPresets = root.dataset.presetKeys === "digits";
  const roiInput = root.dataset.roiInput ? document.getElementById(root.dataset.roiInput) : null;
  // A real-or-edited case: a click (a press without a drag) marks where the change is.
  const markInputs = root.dataset.markInputs
    ? root.dataset.markInputs.split(" ").map((id) => document.getElementById(id)) : null;
  const CLICK_PX = 4; // a press that moves less than this is a click, not a pan
  // The tools this screen gives (a study may withhold some); without the attribute, all.
  const TOOLS = ["window", "flicker", "swipe", "difference"];
  const given = new Set(root.dataset.tools !== undefined ? root.dataset.tools.split(" ").filter(Boolean) : TOOLS);
  const can = (tool) => given.has(tool);
  // How each tool was used on this screen: times turned on, and milliseconds it was on
  // (window/level: while the picture differs from the full range).
  const use = Object.fromEntries(TOOLS.map((t) => [t, { uses: 0, ms: 0, since: null }]));
  function using(tool, on) {
    const u = use[tool];
    if (on && u.since === null) { u.uses += 1; u.since = performance.now(); }
    else if (!on && u.since !== null) { u.ms += performance.now() - u.since; u.since = null; }
  }
  function toolUse() {
    const now = performance.now();
    const out = {};
    TOOLS.forEach((t) => {
      const u = use[t];
      if (u.uses) out[t] = { uses: u.uses, ms: Math.round(u.ms + (u.since === null ? 0 : now - u.since)) };
    });
    return out;
  }
  const state = {
    linked: true, width: 1, level: 0.5, invert: false, colour: false, preset: 0,
    flicker: false, swipe: false, swipeAt: 0.5, diff: false, original: false,
    single: false, active: null, roiTool: "off", roi: null, mark: null,
  };
  const filter = document.getElementById("mb-wl");
  const status = root.querySelector("[data-viewer-status]");
  let syncing = false;

  const panes = Array.from(root.querySelectorAll(".viewport")).map((frame, index) => {
    const stage = frame.querySelector(".stage");
    const pz = window.Panzoom(stage, {
      noBind: true, minScale: 0.5, maxScale: 32, step: 0.3, cursor: "grab", animate: false,
      handleStartEvent: (event) => event.preventDefault(),
    });
    const pane = { frame, stage, pz, index, base: stage.querySelector(".layer-base") };
    stage.addEventListener("panzoomchange", (event) => changed(pane, event.detail));
    frame.addEventListener("wheel", (event) => { activate(pane); pz.zoomWithWheel(event); }, { passive: false });
    frame.addEventListener("pointerdown", (event) => pointerDown(pane, event));
    frame.addEventListener("dblclick", (event) => { event.preventDefault(); activate(pane); fit(); });
    frame.addEventListener("contextmenu", (event) => event.preventDefault());
    frame.addEventListener("pointerenter", () => { if (!state.single) activate(pane); });
    if (pane.base) {
      if (pane.base.complete) layout(pane);
      else pane.base.addEventListener("load", () => layout(pane), { once: true });
    }
    return pane;
  });
  if (!panes.length) return;
  const resized = new ResizeObserver((entries) => entries.forEach((entry) => {
    const pane = panes.find((p) => p.frame === entry.target);
    if (pane) layout(pane);
  }));
  panes.forEach((pane) => resized.observe(pane.frame));
  activate(panes.find((p) => p.frame.dataset.primary === "1") || panes[0]);

  // The stage is the image's own box, centred in its frame, so overlays (difference map,
  // region of interest) and the swipe line line up with the pixels underneath.
  function layout(pane) {
    const img = pane.base;
    if (!img || !img.naturalWidth) return;
    const fw = pane.frame.clientWidth, fh = pane.frame.clientHeight;
    if (!fw || !fh) return;
    const aspect = img.naturalWidth / img.naturalHeight;
    const w = Math.min(fw, fh * aspect), h = w / aspect;
    Object.assign(pane.stage.style, {
      left: `${(fw - w) / 2}px`, top: `${(fh - h) / 2}px`, width: `${w}px`, height: `${h}px`, right: "auto", bottom: "auto",
    });
    updateSwipe();
  }

  function activate(pane) {
    state.active = pane;
    panes.forEach((p) => p.frame.closest(".pane").classList.toggle("active", p === pane));
  }

  function linkedTo(pane) {
    return state.linked ? panes.filter((p) => p !== pane) : [];
  }

  function changed(pane, detail) {
    if (syncing) return;
    syncing = true;
    try {
      linkedTo(pane).forEach((other) => {
        const rx = other.stage.offsetWidth / (pane.stage.offsetWidth || 1);
        const ry = other.stage.offsetHeight / (pane.stage.offsetHeight || 1);
        other.pz.zoom(detail.scale, { animate: false, silent: true, force: true });
        other.pz.pan(detail.x * rx, detail.y * ry, { animate: false, silent: true, force: true });
      });
    } finally {
      syncing = false;
    }
    if (detail.scale > FULL_RES_SCALE) loadFull(state.linked ? panes : [pane]);
    requestAnimationFrame(updateSwipe);
    report();
  }

  function fit() {
    (state.linked ? panes : [state.active]).forEach((p) => p.pz.reset({ animate: false, silent: true }));
    requestAnimationFrame(updateSwipe);
    report();
  }

  function zoomBy(factor) {
    const pane = state.active;
    pane.pz.zoom(pane.pz.getScale() * factor, { animate: false });
  }

  // Previews are 768 pixels; zoomed further in, the file itself is loaded and swapped in once
  // it has arrived, so the picture never blanks.
  function loadFull(which) {
    which.forEach((pane) => pane.stage.querySelectorAll("img[data-full]").forEach((img) => {
      if (img.dataset.fullLoading || !img.getAttribute("src")) return;
      img.dataset.fullLoading = "1";
      const full = new Image();
      full.onload = () => { img.src = full.src; };
      full.src = img.dataset.full;
    }));
  }

  // Window/level: one SVG filter for every pane, a linear map of each channel.
  function applyLevels() {
    const slope = 1 / state.width;
    let intercept = 0.5 - state.level / state.width;
    let s = slope;
    if (state.invert) { s = -slope; intercept = 1 - intercept; }
    filter.querySelectorAll("feFuncR, feFuncG, feFuncB").forEach((f) => {
      f.setAttribute("slope", s.toFixed(4));
      f.setAttribute("intercept", intercept.toFixed(4));
    });
    const identity = state.width === 1 && state.level === 0.5 && !state.invert;
    root.classList.toggle("levels", !identity && (greyscale || state.colour));
    using("window", !identity);
    report();
  }

  function setLevels(width, level) {
    state.width = Math.min(2, Math.max(0.02, width));
    state.level = Math.min(1.5, Math.max(-0.5, level));
    applyLevels();
  }

  function preset(index) {
    state.preset = index;
    const select = root.querySelector("[data-preset]");
    if (select) select.value = String(index);
    setLevels(PRESETS[index].width, PRESETS[index].level);
  }

  function resetLevels() {
    state.invert = false;
    preset(0);
  }

  function setFlicker(on) {
    if (!can("flicker")) return;
    state.flicker = on;
    using("flicker", on);
    root.classList.toggle("flicker", on);
    report();
  }

  // The pairwise screen's panes carry the original as a third layer: o shows it in A's and
  // B's place, at their zoom, so the original needs no pane of its own on a narrow screen.
  const hasOriginal = root.querySelector(".layer-original") !== null;
  function setOriginal(on) {
    if (!hasOriginal) return;
    state.original = on;
    root.classList.toggle("original", on);
    report();
  }

  function setSwipe(on) {
    if (!can("swipe")) return;
    state.swipe = on;
    using("swipe", on);
    root.classList.toggle("swipe", on);
    const slider = root.querySelector("[data-swipe-range]");
    if (slider) slider.disabled = !on;
    updateSwipe();
    report();
  }

  // The swipe line stays where the slider puts it on screen, whatever the zoom: each pane's
  // clip is worked out in its stage's own coordinates.
  function updateSwipe() {
    if (!state.swipe) return;
    panes.forEach((pane) => {
      const frame = pane.frame.getBoundingClientRect();
      const stage = pane.stage.getBoundingClientRect();
      const x = frame.left + state.swipeAt * frame.width;
      const share = stage.width ? (x - stage.left) / stage.width : 0;
      const pct = Math.min(100, Math.max(0, share * 100));
      pane.stage.style.setProperty("--swipe-clip", `${pct}%`);
      pane.frame.style.setProperty("--swipe-line", `${state.swipeAt * 100}%`);
    });
  }

  function setDiff(on) {
    if (!can("difference")) return;
    state.diff = on;
    using("difference", on);
    // Made on first use: most readings never ask for the map, so it is not fetched.
    if (on) panes.forEach((pane) => {
      if (!pane.frame.dataset.diff || pane.stage.querySelector(".layer-diff")) return;
      const img = document.createElement("img");
      img.className = "layer layer-diff";
      img.alt = `Difference map: ${pane.frame.dataset.label}`;
      img.draggable = false;
      // Until the map has come, the pane says it is coming: an empty overlay must never be
      // taken for "nothing changed".
      pane.frame.dataset.diffState = "loading";
      img.addEventListener("load", () => { pane.frame.dataset.diffState = "ready"; report(); });
      img.addEventListener("error", () => { pane.frame.dataset.diffState = "failed"; report(); });
      img.src = pane.frame.dataset.diff;
      pane.stage.insertBefore(img, pane.stage.querySelector(".roi-layer"));
    });
    root.classList.toggle("diff", on);
    report();
  }

  function setSingle(on) {
    state.single = on;
    root.classList.toggle("single", on);
    if (on && root.requestFullscreen && !document.fullscreenElement) {
      root.requestFullscreen().catch(() => {}); // refused (no gesture): the window is used
    } else if (!on && document.fullscreenElement === root) {
      document.exitFullscreen().catch(() => {});
    }
    panes.forEach(layout);
    report();
  }
  document.addEventListener("fullscreenchange", () => {
    if (!document.fullscreenElement && state.single) setSingle(false);
  });

  function cycleActive(step) {
    // Full screen shows any pane; otherwise a pane the layout hides (the pairwise original
    // on a narrow screen) is passed over.
    const shown = state.single ? panes : panes.filter((p) => p === state.active || p.frame.offsetParent !== null);
    const at = shown.indexOf(state.active);
    const next = shown[(at + step + shown.length) % shown.length];
    activate(next);
    if (state.single) panes.forEach(layout);
    report();
  }

  function setLinked(on) {
    state.linked = on;
    const box = root.querySelector("[data-link]");
    if (box) box.checked = on;
    if (on) { // bring every pane to the active one's view
      const p = state.active.pz.getPan();
      changed(state.active, { x: p.x, y: p.y, scale: state.active.pz.getScale() });
    }
    report();
  }

  // Pointer routing: right button (or Shift) is window/level, left is pan, or drawing the
  // region of interest when that tool is chosen.
  let drag = null;
  function pointerDown(pane, event) {
    activate(pane);
    if (state.roiTool !== "off" && event.button === 0 && !event.shiftKey) {
      drag = { kind: "roi", pane, points: [point(pane, event)] };
    } else if (can("window") && (event.button === 2 || (event.button === 0 && event.shiftKey))) {
      drag = { kind: "levels", x: event.clientX, y: event.clientY, width: state.width, level: state.level,
        w: pane.frame.clientWidth || 1, h: pane.frame.clientHeight || 1 };
    } else if (event.button === 0) {
      drag = { kind: "pan", pane, x: event.clientX, y: event.clientY };
      pane.pz.handleDown(event);
    } else return;
    event.preventDefault();
    pane.frame.setPointerCapture?.(event.pointerId);
  }
  document.addEventListener("pointermove", (event) => {
    if (!drag) return;
    if (drag.kind === "pan") drag.pane.pz.handleMove(event);
    else if (drag.kind === "levels") {
      // Left/right widens/narrows the window; down darkens, up brightens.
      setLevels(drag.width * Math.exp((event.clientX - drag.x) / drag.w * 2),
        drag.level + (event.clientY - drag.y) / drag.h);
    } else if (drag.kind === "roi") {
      const p = point(drag.pane, event);
      const last = drag.points[drag.points.length - 1];
      if (state.roiTool === "rect") drag.points = [drag.points[0], p];
      else if (Math.hypot(p[0] - last[0], p[1] - last[1]) > 0.004 && drag.points.length < 400) drag.points.push(p);
      drawRoi({ kind: state.roiTool, points: drag.points });
    }
  });
  function pointerUp(event) {
    if (!drag) return;
    if (drag.kind === "pan") {
      drag.pane.pz.handleUp(event);
      if (markInputs && Math.hypot(event.clientX - drag.x, event.clientY - drag.y) < CLICK_PX) {
        setMark(point(drag.pane, event));
      }
    } else if (drag.kind === "roi") finishRoi(drag.points);
    drag = null;
  }
  document.addEventListener("pointerup", pointerUp);
  document.addEventListener("pointercancel", pointerUp);

  // Region of interest, in shares of the image's width and height (0-1), so it does not
  // depend on the zoom, the pane's size or the image's resolution.
  function point(pane, event) {
    const box = pane.stage.getBoundingClientRect();
    const clamp = (v) => Math.round(Math.min(1, Math.max(0, v)) * 10000) / 10000;
    return [clamp((event.clientX - box.left) / box.width), clamp((event.clientY - box.top) / box.height)];
  }

  function finishRoi(points) {
    const roi = { kind: state.roiTool, points };
    const usable = roi.kind === "rect"
      ? points.length === 2 && Math.abs(points[0][0] - points[1][0]) > 0.005 && Math.abs(points[0][1] - points[1][1]) > 0.005
      : points.length >= 3;
    setRoi(usable ? roi : state.roi);
  }

  function setRoi(roi) {
    state.roi = roi;
    drawRoi(roi);
    if (roiInput) {
      const value = roi ? JSON.stringify(roi) : "";
      if (roiInput.value !== value) {
        roiInput.value = value;
        roiInput.dispatchEvent(new Event("change", { bubbles: true }));
      }
    }
    report();
  }

  function setMark(at) {
    state.mark = at;
    root.querySelectorAll("svg.roi-layer").forEach((svg) => {
      svg.querySelectorAll("line").forEach((line) => line.remove());
      if (!at) return;
      const ARM = 0.035;
      [[at[0] - ARM, at[1], at[0] + ARM, at[1]], [at[0], at[1] - ARM, at[0], at[1] + ARM]].forEach((c) => {
        const line = document.createElementNS("http://www.w3.org/2000/svg", "line");
        ["x1", "y1", "x2", "y2"].forEach((name, i) => line.setAttribute(name, String(c[i])));
        line.setAttribute("vector-effect", "non-scaling-stroke");
        svg.appendChild(line);
      });
    });
    markInputs.forEach((input, i) => { input.value = at ? String(at[i]) : ""; });
    markInputs[0].dispatchEvent(new Event("change", { bubbles: true }));
    report();
  }

  function drawRoi(roi) {
    root.querySelectorAll("svg.roi-layer").forEach((svg) => {
      const shape = svg.querySelector("polygon");
      if (!roi) { shape.setAttribute("points", ""); return; }
      const pts = roi.kind === "rect"
        ? [[roi.points[0][0], roi.points[0][1]], [roi.points[1][0], roi.points[0][1]],
          [roi.points[1][0], roi.points[1][1]], [roi.points[0][0], roi.points[1][1]]]
        : roi.points;
      shape.setAttribute("points", pts.map((p) => p.join(",")).join(" "));
    });
  }

  function cycleRoiTool() {
    const order = ["off", "rect", "freehand"];
    state.roiTool = order[(order.indexOf(state.roiTool) + 1) % order.length];
    root.classList.toggle("drawing", state.roiTool !== "off");
    const select = root.querySelector("[data-roi-tool]");
    if (select) select.value = state.roiTool;
    report();
  }

  function report() {
    if (!status) return;
    const parts = [];
    const scale = state.active ? state.active.pz.getScale() : 1;
    parts.push(`zoom ${Math.round(scale * 100)} %`);
    if (!state.linked) parts.push("panes unlinked");
    if (greyscale || state.colour) {
      parts.push(`W ${Math.round(state.width * 100)} % L ${Math.round(state.level * 100)} %${state.invert ? " inverted" : ""}`);
    } else parts.push("colour image: window/level off (c)");
    if (state.flicker) parts.push("FLICKER: images swapped");
    if (state.original) parts.push("ORIGINAL shown in every pane (o)");
    if (state.swipe) parts.push("swipe");
    if (state.diff) {
      const states = panes.map((pane) => pane.frame.dataset.diffState).filter(Boolean);
      if (states.includes("loading")) parts.push("difference map: drawing…");
      else if (states.includes("failed")) parts.push("difference map could not be drawn");
      else parts.push("difference map");
    }
    if (markInputs) parts.push(state.mark ? `change marked at ${Math.round(state.mark[0] * 100)} %, ${Math.round(state.mark[1] * 100)} %` : "no change marked (click the image)");
    if (roiInput) parts.push(state.roi ? `region: ${state.roi.kind === "rect" ? "rectangle" : "freehand"}` : "no region drawn");
    if (state.roiTool !== "off") parts.push(`drawing ${state.roiTool === "rect" ? "a rectangle" : "freehand"}`);
    status.textContent = parts.join(" · ");
    root.dataset.scale = scale.toFixed(3);
  }

  // Toolbar controls mirror the keys.
  root.addEventListener("input", (event) => {
    const t = event.target;
    if (t.matches("[data-swipe-range]")) { state.swipeAt = Number(t.value) / 100; updateSwipe(); }
    else if (t.matches("[data-diff-opacity]")) root.style.setProperty("--diff-opacity", String(Number(t.value) / 100));
  });
  root.addEventListener("change", (event) => {
    const t = event.target;
    if (t.matches("[data-link]")) setLinked(t.checked);
    else if (t.matches("[data-swipe]")) setSwipe(t.checked);
    else if (t.matches("[data-diff]")) setDiff(t.checked);
    else if (t.matches("[data-preset]")) preset(Number(t.value));
    else if (t.matches("[data-invert]")) { state.invert = t.checked; applyLevels(); }
    else if (t.matches("[data-colour]")) { state.colour = t.checked; applyLevels(); }
    else if (t.matches("[data-roi-tool]")) { state.roiTool = t.value; root.classList.toggle("drawing", t.value !== "off"); report(); }
    else return;
    t.blur(); // keys go back to the viewer
  });
  root.addEventListener("click", (event) => {
    const t = event.target instanceof Element ? event.target.closest("[data-action]") : null;
    if (!t) return;
    const actions = { fit, single: () => setSingle(!state.single), flicker: () => setFlicker(!state.flicker),
      original: () => setOriginal(!state.original),
      "zoom-in": () => zoomBy(1.25), "zoom-out": () => zoomBy(0.8), "clear-roi": () => setRoi(null) };
    if (actions[t.dataset.action]) { actions[t.dataset.action](); t.blur(); }
  });

  function sync(selector, value) {
    const el = root.querySelector(selector);
    if (el) el.checked = value;
  }

  let spaceDown = 0;
  let originalDown = 0;
  window.MedBanana.keys.add("viewer", (event) => {
    if (document.querySelector("dialog[open]")) return false; // the key list is open: keys are its
    const key = event.key;
    if (key === " ") {
      if (!event.repeat) { spaceDown = performance.now(); setFlicker(!state.flicker); }
      return true;
    }
    if (key === "o" && hasOriginal && !roiInput) {
      if (!event.repeat) { originalDown = performance.now(); setOriginal(!state.original); }
      return true;
    }
    if (key === "=" ) fit();
    else if (key === "+") zoomBy(1.25);
    else if (key === "-") zoomBy(0.8);
    else if (!can("window") && /^[iw0c1-4]$/.test(key)) return false;
    else if (key === "i") { state.invert = !state.invert; sync("[data-invert]", state.invert); applyLevels(); }
    else if (key === "0") { resetLevels(); sync("[data-invert]", false); }
    else if (key === "w") preset((state.preset + 1) % PRESETS.length);
    else if (digitPresets && !event.shiftKey && /^[1-4]$/.test(key)) preset(Number(key) - 1);
    else if (key === "c" && !greyscale) { state.colour = !state.colour; sync("[data-colour]", state.colour); applyLevels(); }
    else if (key === "s") { setSwipe(!state.swipe); sync("[data-swipe]", state.swipe); }
    else if (key === "d") { setDiff(!state.diff); sync("[data-diff]", state.diff); }
    else if (key === "l") setLinked(!state.linked);
    else if (key === "f") setSingle(!state.single);
    else if (key === "Escape" && state.single) setSingle(false);
    else if (key === "]") cycleActive(1);
    else if (key === "[") cycleActive(-1);
    else if (key === "o" && roiInput) cycleRoiTool();
    else if (key === "x" && roiInput) setRoi(null);
    else if (key === "x" && markInputs) setMark(null);
    else return false;
    return true;
  });
  document.addEventListener("keyup", (event) => {
    if (event.key === "o" && originalDown) {
      // As flicker: a tap leaves the original shown, a hold shows it while held.
      if (performance.now() - originalDown > HOLD_MS) setOriginal(!state.original);
      originalDown = 0;
      return;
    }
    if (event.key !== " " || !spaceDown) return;
    event.preventDefault();
    // A short tap leaves the images swapped (toggle); a hold swaps them back on release.
    if (performance.now() - spaceDown > HOLD_MS) setFlicker(!state.flicker);
    spaceDown = 0;
  }, true);

  if (markInputs && markInputs.every((input) => input.value !== "")) {
    setMark(markInputs.map((input) => Number(input.value)));
  }
  if (roiInput && roiInput.value) {
    try { setRoi(JSON.parse(roiInput.value)); } catch (error) { setRoi(null); }
  }
  preset(0);
  window.MedBanana = window.MedBanana || {};
  window.MedBanana.viewer = { panes, state, fit, setFlicker, setDiff, setSwipe, setLinked, setOriginal, toolUse };
})();
