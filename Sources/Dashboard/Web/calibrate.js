// BeaconTracker calibration page: a walk with one beacon, each place marked by a tap on the floor plan and recorded
// by the hub (/api/calibration/session), applied live as a new stored version, with the versions and a roll back.
// The hub holds the session; this page shows what it says (polled every second) and sends the taps.
// Plain JavaScript, no build step.
"use strict";

const WHO_KEY = "beacontracker-who";
const BEACON_KEY = "beacontracker-calibration-beacon";
const MODE_KEY = "beacontracker-calibration-mode";
const SESSION_KEY = "beacontracker-calibration-session";

const state = {
  venue: null,
  zones: new Map(),      // id -> {id, name, shape, centre, box}
  span: 10,              // the plan's larger side in metres: labels and marks are sized from it
  overview: null,        // the last GET /api/calibration
  status: null,          // the last session status shown
  received: 0,           // performance.now() when it arrived (the countdown runs on from there)
  sent: 0,               // requests for a status sent, numbered …
  shown: 0,              // … and the number of the one shown, so that a late poll never undoes a newer tap
  polling: false,
  pollTimer: null,
  pollInFlight: null,
  ticker: null,
  busy: false,           // a tap being posted: further taps wait
  errorFromPoll: false,  // the error shown came from polling: the next good poll clears it
};

// A token pasted into the address of the open page changes only the fragment: load the page again to take it.
addEventListener("hashchange", () => { if (/token=/.test(location.hash)) location.reload(); });

const $ = id => document.getElementById(id);

// MARK: The API

/** An error answer of the hub (`{"error": {"code", "message"}}`), or a failure to reach it (status 0). */
class APIFailure extends Error {
  constructor(status, code, message) {
    super(message);
    this.status = status;
    this.code = code;
  }
}

async function api(path, { method = "GET", body } = {}) {
  const headers = {};
  if (token) headers.Authorization = `Bearer ${token}`;
  if (body !== undefined) headers["Content-Type"] = "application/json";
  let response;
  try {
    response = await fetch(path, { method, headers, body: body === undefined ? undefined : JSON.stringify(body) });
  } catch (error) {
    throw new APIFailure(0, "network", `cannot reach the hub (${error.message})`);
  }
  const text = await response.text().catch(() => "");
  let data = null;
  if (text) {
    try { data = JSON.parse(text); } catch { data = null; }
  }
  if (response.ok) return data;
  const detail = data && data.error ? data.error : {};
  let message = detail.message || `${response.status} ${response.statusText}`.trim();
  if (response.status === 401) message += " — open the page as …/calibrate#token=<the hub's token>";
  throw new APIFailure(response.status, detail.code || "http", message);
}

function showError(message, fromPoll = false) {
  const node = $("error");
  node.textContent = message;
  node.hidden = false;
  state.errorFromPoll = fromPoll;
}

function clearError(onlyFromPoll = false) {
  if (onlyFromPoll && !state.errorFromPoll) return;
  $("error").hidden = true;
  $("error").textContent = "";
  state.errorFromPoll = false;
}

function showMessage(text) {
  $("message").textContent = text;
  $("message").hidden = !text;
}

function remember(key, value) {
  try { localStorage.setItem(key, value); } catch { /* private mode: nothing kept */ }
}

function recall(key) {
  try { return localStorage.getItem(key) || ""; } catch { return ""; }
}

// MARK: Words

function time(t) {
  return new Date(t * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

function dateTime(t) {
  return new Date(t * 1000).toLocaleString([], { year: "numeric", month: "short", day: "numeric",
    hour: "2-digit", minute: "2-digit" });
}

function percent(value) {
  return value == null ? "–" : `${Math.round(value * 100)} %`;
}

function beforeAfter(before, after) {
  return `${percent(before)} → ${percent(after)}`;
}

function zoneName(id) {
  return state.zones.get(id)?.name ?? id;
}

// Where a mark or stay is: its zone, or its point and the zone that holds it.
function place(mark) {
  if (mark.x == null || mark.y == null) return mark.zone == null ? "?" : zoneName(mark.zone);
  const point = `${mark.x.toFixed(1)}, ${mark.y.toFixed(1)} m`;
  return mark.zone == null ? `${point}, outside every zone` : `${point} in ${zoneName(mark.zone)}`;
}

// MARK: The plan (drawn as the dashboard draws it: venue metres, y down)

function drawPlan() {
  const venue = state.venue;
  const plan = $("plan");
  plan.replaceChildren();
  state.zones.clear();
  // Zones without a shape (a hub without a venue file) are laid out in a row, as on the dashboard: their places
  // mean nothing, so taps can only mark zones.
  const placed = venue.zones.some(zone => zone.shape.length >= 3);
  const shapes = zoneShapes(venue);
  if (!placed) {
    $("mode-zone").checked = true;
    $("mode-point").disabled = true;
  }
  const bounds = extent(venue, shapes);
  state.span = Math.max(1, bounds.maxX - bounds.minX, bounds.maxY - bounds.minY);
  const margin = state.span / 40;
  plan.setAttribute("viewBox", [bounds.minX - margin, bounds.minY - margin,
    bounds.maxX - bounds.minX + 2 * margin, bounds.maxY - bounds.minY + 2 * margin].join(" "));
  const font = Math.min(1.6, Math.max(0.35, state.span / 36));
  plan.style.setProperty("--font", `${font}px`);
  const zonesLayer = element("g", { id: "zones" }, plan);
  venue.zones.forEach((zone, index) => {
    const shape = shapes[index];
    const geometry = polygonGeometry(shape);
    state.zones.set(zone.id, { ...zone, shape, ...geometry });
    const group = element("g", { class: "zone", "data-zone": zone.id }, zonesLayer);
    element("polygon", { points: shape.map(p => p.join(",")).join(" ") }, group);
    const label = element("text", { x: geometry.box.minX + font * 0.4, y: geometry.box.minY + font * 1.2 }, group);
    label.textContent = zone.name;
    element("text", { class: "seconds", x: geometry.box.minX + font * 0.4, y: geometry.box.minY + font * 2.4 }, group);
  });
  const structure = element("g", { id: "structure" }, plan);
  for (const wall of venue.walls || []) {
    element("line", { class: "wall", x1: wall.from[0], y1: wall.from[1], x2: wall.to[0], y2: wall.to[1] }, structure);
  }
  for (const door of venue.doors || []) element("line", { class: "door", ...doorEnds(door, venue, shapes) }, structure);
  const gatewaysLayer = element("g", { id: "gateways" }, plan);
  const side = state.span / 60;
  for (const gateway of venue.gateways || []) {
    if (!gateway.position) continue;
    const node = element("rect", { class: `gateway ${gateway.health}`, "data-gateway": gateway.id,
      x: gateway.position[0] - side / 2, y: gateway.position[1] - side / 2, width: side, height: side }, gatewaysLayer);
    element("title", {}, node).textContent = `${gateway.id}: ${gateway.health}`;
  }
  element("g", { id: "marks-layer" }, plan);
  element("g", { id: "current-layer" }, plan);
}

// A tap on the plan: in point mode the spot in venue metres, in zone mode the zone under the finger.
function tap(event) {
  if (!state.status || !state.venue) return;
  if (state.busy) return;
  if ($("mode-zone").checked) {
    const group = event.target.closest ? event.target.closest("g.zone") : null;
    if (!group) {
      showMessage("Tap inside a zone, or switch to “a point”.");
      return;
    }
    postMark({ zone: group.dataset.zone });
    return;
  }
  const matrix = $("plan").getScreenCTM();
  if (!matrix) return;
  const point = new DOMPoint(event.clientX, event.clientY).matrixTransform(matrix.inverse());
  postMark({ x: Math.round(point.x * 100) / 100, y: Math.round(point.y * 100) / 100 });
}

function drawPlanStatus(status) {
  const current = status.current;
  const byZone = new Map(status.zones.map(zone => [zone.zone, zone]));
  for (const group of document.querySelectorAll("#zones g.zone")) {
    const zone = byZone.get(group.dataset.zone);
    const seconds = zone ? zone.seconds : 0;
    group.classList.toggle("stayed", seconds > 0);
    group.dataset.quality = zone ? zone.quality : "none";
    group.classList.toggle("current", Boolean(current && current.x == null && current.zone === group.dataset.zone));
    group.querySelector("text.seconds").textContent = seconds > 0 ? `${Math.round(seconds)} s · ${zone.quality}` : "";
  }
  const marksLayer = $("marks-layer");
  marksLayer.replaceChildren();
  const radius = state.span / 80;
  for (const mark of status.marks) {
    if (mark.x == null || mark.y == null) continue;
    const dot = element("circle", { class: "mark", "data-n": mark.n, cx: mark.x, cy: mark.y, r: radius }, marksLayer);
    element("title", {}, dot).textContent = `${mark.n}: ${place(mark)}`;
  }
  const currentLayer = $("current-layer");
  currentLayer.replaceChildren();
  if (current && current.x != null && current.y != null) {
    element("circle", { class: "current-spot", "data-n": current.n, cx: current.x, cy: current.y,
      r: radius * 2.4 }, currentLayer);
    element("circle", { class: "current-dot", cx: current.x, cy: current.y, r: radius }, currentLayer);
  }
}

// MARK: The session

function renderStatus(status, number) {
  if (number < state.shown) return;
  state.shown = number;
  state.status = status;
  state.received = performance.now();
  const info = $("session-info");
  info.replaceChildren();
  const beacon = document.createElement("code");
  beacon.textContent = status.beacon;
  info.append("Beacon ", beacon, ` carried by ${status.who} since ${time(status.started)} · `
    + `${status.seconds} s a stay · ${status.sightings} ${status.sightings === 1 ? "sighting" : "sightings"} · `);
  const heard = document.createElement("span");
  if (status.lastHeard == null) {
    heard.textContent = "not heard yet: is the beacon on, and its id right?";
    heard.className = "warn";
  } else {
    const ago = Math.max(0, status.now - status.lastHeard);
    heard.textContent = ago < 2 ? "heard now" : `last heard ${Math.round(ago)} s ago`;
    if (ago > 10) heard.className = "warn";
  }
  info.append(heard);

  const warnings = $("warnings");
  warnings.replaceChildren();
  for (const warning of status.warnings || []) {
    const item = document.createElement("li");
    item.textContent = warning;
    warnings.appendChild(item);
  }

  const missing = status.zones.filter(zone => zone.quality === "none").map(zone => zone.name || zone.zone);
  $("todo").textContent = missing.length
    ? `Still without a stay: ${missing.join(", ")}.`
    : "Every zone has a stay. Add stays where the quality is poor or fair, then finish.";

  const marks = $("marks");
  marks.replaceChildren();
  for (const mark of [...status.marks].reverse()) {
    const item = document.createElement("li");
    item.dataset.n = String(mark.n);
    item.dataset.zone = mark.zone ?? "";
    if (status.current && status.current.n === mark.n) item.className = "current";
    item.textContent = `${mark.n}. ${place(mark)} · ${time(mark.t)}–${time(mark.until)}`;
    marks.appendChild(item);
  }

  const body = document.querySelector("#zones-table tbody");
  body.replaceChildren();
  for (const zone of status.zones) {
    const row = document.createElement("tr");
    row.dataset.zone = zone.zone;
    row.className = `q-${zone.quality}`;
    const cells = [
      [zone.name || zoneName(zone.zone), "name"],
      [String(Math.round(zone.seconds)), "num seconds"],
      [String(zone.gateways), "num gateways"],
      [zone.quality, "quality"],
      [beforeAfter(zone.before, zone.after), "accuracy"],
    ];
    for (const [text, className] of cells) {
      const cell = document.createElement("td");
      cell.textContent = text;
      cell.className = className;
      row.appendChild(cell);
    }
    body.appendChild(row);
  }

  const check = status.check;
  $("check").textContent = check
    ? `Expected accuracy over the walk: ${beforeAfter(check.before, check.after)} `
      + `(${Math.round(check.seconds)} s scored in ${check.folds} folds)`
    : "Expected accuracy over the walk: – → – (not enough stays yet)";

  if (state.venue) drawPlanStatus(status);
  renderCurrent();
}

// The stay under way and its countdown, run on locally between polls.
function renderCurrent() {
  const status = state.status;
  const node = $("current");
  if (!status) { node.textContent = ""; return; }
  const current = status.current;
  const remaining = current ? current.remaining - (performance.now() - state.received) / 1000 : 0;
  if (current && remaining > 0) {
    const count = `${Math.ceil(remaining)} s`;
    // A zone is learnt from a stroll round its middle; a point from standing at it (docs/dashboard.md).
    const what = current.x == null
      ? `Stroll about ${place(current)}, slowly round its middle`
      : `Stay here, turning slowly: ${place(current)}`;
    if (node.className !== "stay") {
      node.className = "stay";
      node.replaceChildren();
      const big = document.createElement("div");
      big.className = "count";
      const line = document.createElement("div");
      line.className = "what";
      node.append(big, line);
    }
    if (node.firstChild.textContent !== count) node.firstChild.textContent = count;
    if (node.lastChild.textContent !== what) node.lastChild.textContent = what;
    return;
  }
  // The stay ran out between polls: its zone, spot and list line stop showing it now, as the countdown does, not at
  // the next poll up to a second later.
  if (current) clearCurrent();
  const zones = $("mode-zone").checked;
  const first = zones ? "Tap the zone you are in to start the first stay."
    : "Tap where you stand on the plan to start the first stay.";
  const next = zones ? "Walk to the next zone and tap it on the plan."
    : "Walk to the next place and tap it on the plan.";
  const prompt = status.marks.length ? next : first;
  if (node.className !== "prompt" || node.textContent !== prompt) {
    node.className = "prompt";
    node.textContent = prompt;
  }
}

function clearCurrent() {
  for (const node of document.querySelectorAll("#zones g.zone.current, #marks li.current")) {
    node.classList.remove("current");
  }
  const layer = $("current-layer");
  if (layer && layer.firstChild) layer.replaceChildren();
}

async function postMark(body) {
  state.busy = true;
  $("plan").classList.add("busy");
  const number = ++state.sent;
  try {
    const status = await api("/api/calibration/session/marks", { method: "POST", body });
    clearError();
    showMessage("");
    renderStatus(status, number);
  } catch (error) {
    if (error.code === "no-session") await sessionEnded();
    else showError(`cannot mark this place: ${error.message}`);
  } finally {
    state.busy = false;
    $("plan").classList.remove("busy");
  }
}

function startPolling() {
  stopPolling();
  state.polling = true;
  state.pollTimer = setTimeout(poll, 1000);
}

function stopPolling() {
  state.polling = false;
  clearTimeout(state.pollTimer);
  state.pollTimer = null;
}

async function poll() {
  state.pollTimer = null;
  if (!state.polling) return;
  const number = ++state.sent;
  const request = api("/api/calibration/session");
  state.pollInFlight = request.catch(() => null);
  try {
    const status = await request;
    if (!state.polling) return;
    clearError(true);
    renderStatus(status, number);
  } catch (error) {
    if (!state.polling) return;
    if (error.code === "no-session") {
      await sessionEnded();
      return;
    }
    showError(`cannot read the walk: ${error.message}`, true);
  } finally {
    state.pollInFlight = null;
    if (state.polling && !state.pollTimer) state.pollTimer = setTimeout(poll, 1000);
  }
}

// Stops polling and waits for a poll under way, so that it never asks for a session this page is about to end.
async function quiesce() {
  stopPolling();
  if (state.pollInFlight) await state.pollInFlight;
}

// The hub has no session any more (finished or cancelled by another page or a script).
async function sessionEnded() {
  stopPolling();
  await loadOverview().catch(error => showError(`cannot read the calibration: ${error.message}`));
  showMessage("The walk has ended: it was finished or cancelled elsewhere.");
}

function showSession(status, { resumed }) {
  $("start-section").hidden = true;
  $("session-section").hidden = false;
  const notice = $("resume");
  notice.hidden = !resumed;
  if (resumed) {
    $("resume-text").textContent = `A walk is already running: beacon ${status.beacon}, carried by ${status.who} `
      + `since ${time(status.started)}, ${status.marks.length} ${status.marks.length === 1 ? "stay" : "stays"}. `
      + "Continue it here, or cancel it (nothing is applied).";
  }
  try { sessionStorage.setItem(SESSION_KEY, status.id); } catch { /* nothing kept */ }
  renderStatus(status, ++state.sent);
  startPolling();
  if (!state.ticker) state.ticker = setInterval(renderCurrent, 250);
}

function showStart() {
  stopPolling();
  clearInterval(state.ticker);
  state.ticker = null;
  state.status = null;
  $("session-section").hidden = true;
  $("start-section").hidden = false;
}

async function startSession(event) {
  event.preventDefault();
  const beacon = $("beacon").value.trim();
  const who = $("who").value.trim();
  const seconds = Number($("seconds").value);
  if (!beacon) return showError("Give the id of the beacon you carry (e.g. ibeacon:<uuid>:<major>:<minor>).");
  if (!who) return showError("Give your name: it is recorded with the calibration.");
  if (!Number.isFinite(seconds) || seconds <= 0) return showError("Seconds per stay: a number above 0 (60 is usual).");
  remember(WHO_KEY, who);
  remember(BEACON_KEY, beacon);
  clearError();
  showMessage("");
  $("start").disabled = true;
  try {
    const status = await api("/api/calibration/session", { method: "POST", body: { beacon, who, seconds } });
    showSession(status, { resumed: false });
  } catch (error) {
    if (error.code === "session-open") {
      try {
        showSession(await api("/api/calibration/session"), { resumed: true });
      } catch (again) {
        showError(`a walk is running, but it cannot be read: ${again.message}`);
      }
    } else {
      showError(`cannot start the walk: ${error.message}`);
    }
  } finally {
    $("start").disabled = false;
  }
}

function setSessionButtons(disabled) {
  for (const id of ["finish", "cancel", "resume-cancel"]) {
    const button = $(id);
    if (button) button.disabled = disabled;
  }
}

async function finish() {
  setSessionButtons(true);
  await quiesce();
  const note = $("note").value.trim();
  try {
    const answer = await api("/api/calibration/session/finish", { method: "POST", body: note ? { note } : {} });
    $("note").value = "";
    clearError();
    showStart();
    await loadOverview().catch(error => showError(`cannot read the calibration: ${error.message}`));
    const version = answer && answer.version;
    showMessage(version
      ? `Applied as version ${version.version}` + (version.before != null || version.after != null
        ? `: expected accuracy ${beforeAfter(version.before, version.after)}.` : ".")
      : "Applied.");
  } catch (error) {
    if (error.code === "no-session") {
      await sessionEnded();
    } else {
      showError(`cannot finish: ${error.message}`);
      startPolling();
    }
  } finally {
    setSessionButtons(false);
  }
}

async function cancel() {
  setSessionButtons(true);
  await quiesce();
  try {
    await api("/api/calibration/session", { method: "DELETE" });
    clearError();
    showStart();
    await loadOverview().catch(error => showError(`cannot read the calibration: ${error.message}`));
    showMessage("Walk cancelled: nothing was applied.");
  } catch (error) {
    if (error.code === "no-session") {
      await sessionEnded();
    } else {
      showError(`cannot cancel: ${error.message}`);
      startPolling();
    }
  } finally {
    setSessionButtons(false);
  }
}

// MARK: Versions

// What a roll back put back in force.
function restoredText(version) {
  if (version.restores == null) return "an earlier version";
  if (version.restores !== 0) return `version ${version.restores}`;
  return state.overview && state.overview.configured == null
    ? "no calibration (version 0)" : "hub.yaml's calibration (version 0)";
}

function describeVersion(version) {
  if (version.kind === "rollback") return `a roll back to ${restoredText(version)}`;
  if (version.kind === "placement") return "a gateway placed where it stands now (from its panel on the plan)";
  const parts = [`a walk: ${version.zones} ${version.zones === 1 ? "zone" : "zones"}, `
    + `${version.gateways} ${version.gateways === 1 ? "gateway" : "gateways"}`];
  if (version.before != null || version.after != null) {
    parts.push(`expected accuracy ${beforeAfter(version.before, version.after)}`);
  }
  return parts.join("; ");
}

// A walk's note as given on the page (a roll back's note only repeats what it restored).
function noteText(version) {
  return version.kind !== "rollback" && version.note ? ` · “${version.note}”` : "";
}

function renderOverview(overview) {
  const active = overview.active;
  $("active").textContent = active
    ? `version ${active.version} by ${active.who}, ${dateTime(active.created)}`
    : overview.configured ? "hub.yaml's calibration" : "none";
  $("active-detail").textContent = active
    ? describeVersion(active) + noteText(active)
    : overview.configured
      ? `Version 0: ${overview.configured}, the file hub.yaml's calibration: names.`
      : "Version 0: hub.yaml names no calibration file; the hub runs uncalibrated.";
  $("not-stored").hidden = overview.stored !== false;
  const rollback = $("rollback");
  rollback.disabled = !active;
  rollback.title = active ? "return to the version before the active one" : "nothing to roll back";
  const list = $("versions");
  list.replaceChildren();
  for (const version of overview.versions) {
    const item = document.createElement("li");
    item.dataset.version = String(version.version);
    if (active && active.version === version.version) item.className = "active";
    const title = document.createElement("strong");
    title.textContent = `version ${version.version}`;
    item.append(title, ` by ${version.who}, ${dateTime(version.created)} · ${describeVersion(version)}`
      + noteText(version)
      + (active && active.version === version.version ? " · in use" : ""));
    list.appendChild(item);
  }
  $("no-versions").hidden = overview.versions.length > 0;
}

// Reads the calibration's state; it decides which section shows.
async function loadOverview() {
  const overview = await api("/api/calibration");
  state.overview = overview;
  renderOverview(overview);
  if (overview.session) {
    if ($("session-section").hidden) {
      let mine = false;
      try { mine = sessionStorage.getItem(SESSION_KEY) === overview.session.id; } catch { mine = false; }
      showSession(overview.session, { resumed: !mine });
    }
  } else {
    showStart();
  }
}

async function rollback() {
  const who = $("who").value.trim() || recall(WHO_KEY) || (state.status ? state.status.who : "");
  if (!who) {
    showError("Give your name under “Your name” first: a roll back is recorded with it.");
    if (!$("start-section").hidden) $("who").focus();
    return;
  }
  $("rollback").disabled = true;
  try {
    const answer = await api("/api/calibration/rollback", { method: "POST", body: { who } });
    clearError();
    await loadOverview();
    const active = answer && answer.active;
    showMessage(active ? `Rolled back to ${restoredText(active)}, stored as version ${active.version}.` : "Rolled back.");
  } catch (error) {
    showError(`cannot roll back: ${error.message}`);
  } finally {
    $("rollback").disabled = !(state.overview && state.overview.active);
  }
}

// The beacons the hub has tag states for, offered as the beacon field's suggestions.
async function suggestBeacons() {
  let listed;
  try {
    listed = await api("/api/tags");
  } catch {
    return;  // suggestions only: the venue's error (if any) is already shown
  }
  const list = $("beacons");
  list.replaceChildren();
  const seen = new Set();
  for (const tag of listed.tags || []) {
    if (!tag.beacon || seen.has(tag.beacon)) continue;
    seen.add(tag.beacon);
    const option = document.createElement("option");
    option.value = tag.beacon;
    option.label = tag.tag === tag.beacon ? tag.beacon : `${tag.tag}${tag.zone ? " in " + tag.zone : ""}`;
    list.appendChild(option);
  }
}

async function start() {
  $("who").value = recall(WHO_KEY);
  $("beacon").value = recall(BEACON_KEY);
  $("who").addEventListener("change", () => { if ($("who").value.trim()) remember(WHO_KEY, $("who").value.trim()); });
  $("start-form").addEventListener("submit", startSession);
  $("plan").addEventListener("click", tap);
  $("finish").addEventListener("click", finish);
  $("cancel").addEventListener("click", cancel);
  $("rollback").addEventListener("click", rollback);
  $("resume-continue").addEventListener("click", () => { $("resume").hidden = true; });
  $("resume-cancel").addEventListener("click", cancel);
  $("error").addEventListener("click", () => clearError());
  // A zone by default (strolled zones calibrate better than points stood at: docs/dashboard.md); the choice is kept.
  if (recall(MODE_KEY) === "point") $("mode-point").checked = true;
  for (const id of ["mode-point", "mode-zone"]) {
    $(id).addEventListener("change", () => {
      showMessage("");
      remember(MODE_KEY, $("mode-point").checked ? "point" : "zone");
      renderCurrent();
    });
  }
  try {
    state.venue = await api("/api/venue");
    $("venue-name").textContent = state.venue.name;
    document.title = `Calibration · ${state.venue.name} · BeaconTracker`;
    drawPlan();
  } catch (error) {
    showError(`cannot read the venue: ${error.message}`);
  }
  try {
    await loadOverview();
  } catch (error) {
    showStart();
    showError(`cannot read the calibration: ${error.message}`);
  }
  if (state.venue) suggestBeacons();
}

start();
