// BeaconTracker dashboard: the floor plan drawn from /api/venue, kept live by /api/stream (Server-Sent Events),
// with a tag's path and a zone's dwell and routes from the history endpoints, and the Tags view: every tag's battery
// and whereabouts as a table. Plain JavaScript, no build step.
"use strict";

const state = {
  venue: null,
  zones: new Map(),      // id -> {id, name, shape, centre, box}
  tags: new Map(),       // id -> TagView
  occupancy: new Map(),  // zone -> ZoneOccupancy
  gateways: new Map(),   // id -> health
  selectedTag: null,
  selectedGateway: null,
  selectedZone: null,
  dwellChart: null,
  windowHours: 24,       // the history window of the details panel; 0 = everything kept
  tagSort: { key: "battery", descending: false },  // the Tags view's order: a column of tagColumns
  role: null,            // the server's: "active", "standby", or "serve" (the analytics process, which calibrates nothing)
};

async function api(path, method = "GET", payload = undefined) {
  const headers = token ? { Authorization: `Bearer ${token}` } : {};
  if (payload !== undefined) headers["Content-Type"] = "application/json";
  const response = await fetch(path, { method, headers,
    body: payload === undefined ? undefined : JSON.stringify(payload) });
  const body = await response.json().catch(() => ({}));
  if (response.status === 401) {
    throw new Error((body.error ? body.error.message : "unauthorised")
      + " — open the page as …/#token=<the hub's token>");
  }
  if (!response.ok) throw new Error(body.error ? body.error.message : response.statusText);
  return body;
}

function time(t) {
  return new Date(t * 1000).toLocaleTimeString([], { hour: "2-digit", minute: "2-digit", second: "2-digit" });
}

function duration(seconds) {
  if (seconds == null) return "";
  if (seconds < 90) return `${Math.round(seconds)} s`;
  if (seconds < 5400) return `${Math.round(seconds / 60)} min`;
  return `${(seconds / 3600).toFixed(1)} h`;
}

// How long ago the hub time `t` was, by this browser's clock ("never" without a time).
function ago(t) {
  if (t == null) return "never";
  const seconds = Math.max(0, Date.now() / 1000 - t);
  if (seconds < 5) return "just now";
  if (seconds >= 2 * 86400) return `${Math.floor(seconds / 86400)} days ago`;
  return `${duration(seconds)} ago`;
}

function dateTime(t) {
  return new Date(t * 1000).toLocaleString([], { dateStyle: "short", timeStyle: "medium" });
}

// The details panel's history window as query parameters (none for "everything kept").
function windowQuery() {
  if (!state.windowHours) return "";
  return `&since=${Math.floor(Date.now() / 1000 - state.windowHours * 3600)}`;
}

function windowText() {
  const hours = state.windowHours;
  if (!hours) return "everything kept";
  return hours < 24 ? `the last ${hours} h` : hours === 24 ? "the last 24 h" : `the last ${hours / 24} days`;
}

// MARK: The plan

function drawPlan() {
  const venue = state.venue;
  const plan = document.getElementById("plan");
  plan.replaceChildren();
  const shapes = zoneShapes(venue);
  const bounds = extent(venue, shapes);
  const margin = 1;
  plan.setAttribute("viewBox", [bounds.minX - margin, bounds.minY - margin,
    bounds.maxX - bounds.minX + 2 * margin, bounds.maxY - bounds.minY + 2 * margin].join(" "));
  const zonesLayer = element("g", { id: "zones" }, plan);
  venue.zones.forEach((zone, index) => {
    const shape = shapes[index];
    const geometry = polygonGeometry(shape);
    state.zones.set(zone.id, { ...zone, shape, ...geometry });
    const group = element("g", { class: "zone", "data-zone": zone.id }, zonesLayer);
    element("polygon", { points: shape.map(p => p.join(",")).join(" ") }, group);
    const label = element("text", { x: geometry.box.minX + 0.3, y: geometry.box.minY + 0.9 }, group);
    label.textContent = zone.name;
    const count = element("text", { class: "count", x: geometry.box.maxX - 0.3, y: geometry.box.minY + 0.9,
      "text-anchor": "end" }, group);
    count.textContent = "0";
    group.addEventListener("click", () => selectZone(zone.id));
  });
  const structure = element("g", { id: "structure" }, plan);
  for (const wall of venue.walls) {
    element("line", { class: "wall", x1: wall.from[0], y1: wall.from[1], x2: wall.to[0], y2: wall.to[1] }, structure);
  }
  // A door is a gap of its width in the nearest wall (or zone edge), drawn over it.
  for (const door of venue.doors) {
    const line = element("line", { class: "door", "data-door": (door.between || []).join("|"),
      ...doorEnds(door, venue, shapes) }, structure);
    if (door.between) element("title", {}, line).textContent = `door: ${door.between.map(zoneName).join(" ↔ ")}`;
  }
  element("g", { id: "path-layer" }, plan);
  const gatewaysLayer = element("g", { id: "gateways" }, plan);
  for (const gateway of venue.gateways) {
    if (!gateway.position) continue;
    const node = element("rect", { class: `gateway ${gateway.health}`, "data-gateway": gateway.id,
      x: gateway.position[0] - 0.25, y: gateway.position[1] - 0.25, width: 0.5, height: 0.5 }, gatewaysLayer);
    element("title", {}, node);
    node.addEventListener("click", event => { event.stopPropagation(); selectGateway(gateway.id); });
    drawGateway({ gateway: gateway.id, online: gateway.health === "online", monitored: gateway.health !== "unheard",
      lastContact: gateway.lastContact, boot: gateway.boot, linkAlert: gateway.linkAlert });
  }
  element("g", { id: "tags" }, plan);
}

// Where a tag's dot goes: a grid in its zone's box around the zone's centre, in tag order, so dots never overlap.
function dotPositions(zoneID, tagIDs) {
  const zone = state.zones.get(zoneID);
  if (!zone) return new Map();
  const width = zone.box.maxX - zone.box.minX, height = zone.box.maxY - zone.box.minY;
  const step = Math.max(0.45, Math.min(0.9, Math.sqrt(width * height / Math.max(1, tagIDs.length)) / 1.6));
  const columns = Math.max(1, Math.floor((width - 0.6) / step));
  const rows = Math.ceil(tagIDs.length / columns);
  const positions = new Map();
  tagIDs.forEach((tag, index) => {
    const row = Math.floor(index / columns), column = index % columns;
    const inRow = Math.min(columns, tagIDs.length - row * columns);
    const x = zone.centre[0] + (column - (inRow - 1) / 2) * step;
    const y = Math.min(zone.box.maxY - 0.4, Math.max(zone.box.minY + 1.4, zone.centre[1] + (row - (rows - 1) / 2) * step));
    positions.set(tag, [x, y]);
  });
  return positions;
}

function drawTags() {
  const layer = document.getElementById("tags");
  if (!layer) return;
  const byZone = new Map();
  const placed = new Map();
  for (const tag of state.tags.values()) {
    if (!tag.zone || (tag.state !== "inside" && tag.state !== "unknown")) continue;
    // The engine's estimate where it gives one (method: position); otherwise a place in the zone's grid of dots.
    if (tag.position) { placed.set(tag.tag, [tag.position.x, tag.position.y]); continue; }
    if (!byZone.has(tag.zone)) byZone.set(tag.zone, []);
    byZone.get(tag.zone).push(tag.tag);
  }
  for (const [zone, tags] of byZone) {
    for (const [tag, position] of dotPositions(zone, tags.sort())) placed.set(tag, position);
  }
  for (const node of [...layer.children]) {
    const tag = placed.has(node.dataset.tag) ? state.tags.get(node.dataset.tag) : null;
    if (!tag || (node.classList.contains("uncertainty") && !tag.position)) node.remove();
  }
  for (const [id, [x, y]] of placed) {
    const tag = state.tags.get(id);
    if (tag.position) {
      // The estimate's uncertainty: a faint disc under the dots, as wide as the spread of the tag's position.
      let disc = layer.querySelector(`circle.uncertainty[data-tag="${CSS.escape(id)}"]`);
      if (!disc) {
        disc = element("circle", { class: "uncertainty", "data-tag": id }, null);
        layer.prepend(disc);
      }
      disc.setAttribute("cx", x.toFixed(3));
      disc.setAttribute("cy", y.toFixed(3));
      disc.setAttribute("r", Math.max(0.22, tag.position.radius).toFixed(3));
    }
    let dot = layer.querySelector(`circle.tag[data-tag="${CSS.escape(id)}"]`);
    if (!dot) {
      dot = element("circle", { r: 0.22, "data-tag": id }, layer);
      element("title", {}, dot);
      dot.addEventListener("click", event => { event.stopPropagation(); selectTag(id); });
    }
    dot.setAttribute("cx", x.toFixed(3));
    dot.setAttribute("cy", y.toFixed(3));
    dot.setAttribute("data-zone", tag.zone);
    dot.setAttribute("class", `tag ${tag.state}${state.selectedTag === id ? " selected" : ""}`);
    dot.firstChild.textContent = `${id} — ${tag.state} in ${tag.zone}, ${tag.proximity}`;
  }
  for (const [zone, info] of state.zones) {
    const group = document.querySelector(`#zones g[data-zone="${CSS.escape(zone)}"]`);
    if (!group) continue;
    const count = state.occupancy.get(zone)?.count ?? 0;
    group.querySelector("text.count").textContent = String(count);
    group.classList.toggle("occupied", count > 0);
    group.classList.toggle("selected", state.selectedZone === zone);
    void info;
  }
  drawZonesTable();
  drawTagsTable();
  drawTagPanel();
  const inside = [...state.tags.values()].filter(tag => tag.state === "inside").length;
  document.getElementById("totals").textContent = `${inside} tags inside · ${state.tags.size} seen`;
}

function drawZonesTable() {
  const body = document.querySelector("#zones-table tbody");
  body.replaceChildren();
  for (const [id, zone] of state.zones) {
    const occupancy = state.occupancy.get(id);
    const row = document.createElement("tr");
    row.dataset.zone = id;
    for (const [text, numeric] of [[zone.name, false], [occupancy?.count ?? 0, true],
      [occupancy?.unknown?.length ?? 0, true]]) {
      const cell = document.createElement("td");
      cell.textContent = String(text);
      if (numeric) cell.className = "num";
      row.appendChild(cell);
    }
    row.addEventListener("click", () => selectZone(id));
    body.appendChild(row);
  }
}

function gatewayWord(health) {
  return !health.monitored ? "unheard" : health.online ? "online" : "offline";
}

// A gateway's square: its health as the fill, a link alert in force (gateway-moved, gateway-degraded) as an amber rim.
function drawGateway(health) {
  state.gateways.set(health.gateway, health);
  if (state.selectedGateway === health.gateway) drawGatewayPanel();
  const node = document.querySelector(`#gateways rect[data-gateway="${CSS.escape(health.gateway)}"]`);
  if (!node) return;
  const word = gatewayWord(health);
  node.setAttribute("class", `gateway ${word}` + (health.linkAlert ? " link-alert" : "")
    + (state.selectedGateway === health.gateway ? " selected" : ""));
  node.firstChild.textContent = `${health.gateway}: ${word}` + (health.linkAlert ? `, ${health.linkAlert.code}` : "");
  drawGatewayEstimate(health.gateway, node, health.linkAlert?.estimatedPosition);
}

// A moved gateway's place as its links tell it (a gateway-moved alert's estimatedPosition): a dashed circle of the
// estimate's radius, joined by a dashed line to where the venue file puts it.
function drawGatewayEstimate(id, node, estimate) {
  const layer = document.getElementById("gateways");
  layer.querySelector(`g.gateway-estimates[data-gateway="${CSS.escape(id)}"]`)?.remove();
  if (!estimate) return;
  const group = element("g", { class: "gateway-estimates", "data-gateway": id });
  layer.insertBefore(group, layer.firstChild);
  const x = Number(node.getAttribute("x")) + 0.25, y = Number(node.getAttribute("y")) + 0.25;
  element("line", { class: "gateway-estimate-line", x1: x, y1: y, x2: estimate.x, y2: estimate.y }, group);
  element("circle", { class: "gateway-estimate", cx: estimate.x, cy: estimate.y,
    r: Math.max(0.5, estimate.withinMetres) }, group);
}

// The gateway panel's live part: health and the link alert follow the stream; the gain comes from /api/venue.
function drawGatewayPanel() {
  const id = state.selectedGateway;
  const health = state.gateways.get(id);
  if (!id || !health) return;
  document.getElementById("gateway-state").textContent = gatewayWord(health)
    + (health.boot ? ` (boot ${health.boot})` : "");
  document.getElementById("gateway-contact").textContent = health.lastContact
    ? `${ago(health.lastContact)} (${dateTime(health.lastContact)})` : "never";
  const alert = health.linkAlert;
  const badgeNode = document.getElementById("gateway-alert-badge");
  badgeNode.hidden = !alert;
  document.getElementById("gateway-alert").hidden = !alert;
  if (alert) {
    badgeNode.textContent = alert.code;
    document.getElementById("gateway-alert").textContent = `Since ${dateTime(alert.t)}: ${alert.reason}`;
  }
  // Where its links place it, and what to do when it is to stay there.
  const estimate = alert?.estimatedPosition;
  const estimateNode = document.getElementById("gateway-estimate");
  estimateNode.hidden = !estimate;
  if (estimate) {
    estimateNode.textContent = `Its links place it at (${estimate.x.toFixed(1)}, ${estimate.y.toFixed(1)}), within `
      + `${Math.ceil(estimate.withinMetres)} m: ${Math.round(estimate.movedMetres)} m from where the hub has it `
      + "(dashed on the plan). If it is to stay there, place it below (measure its place, or take the links' "
      + "estimate); if it goes back, the alert clears itself.";
  }
  // The change was meant (moved on purpose, an enclosure added): the hub forgets its links and learns them again.
  document.getElementById("gateway-relearn-row").hidden = state.role === "serve" || (!alert
    && !document.getElementById("gateway-relearn-result").textContent);
}

// Where the selected gateway stands, for the place form: the links' estimate while a gateway-moved alert has one,
// otherwise where the hub has it; and, for a gateway placed before, where the venue file puts it.
function fillPlaceForm(gateway) {
  const health = state.gateways.get(state.selectedGateway);
  const estimate = health?.linkAlert?.estimatedPosition;
  const at = estimate ? [estimate.x, estimate.y] : gateway?.position;
  document.getElementById("gateway-place-x").value = at ? at[0].toFixed(1) : "";
  document.getElementById("gateway-place-y").value = at ? at[1].toFixed(1) : "";
  const from = document.getElementById("gateway-place-from");
  const where = gateway?.position ? `(${gateway.position[0].toFixed(1)}, ${gateway.position[1].toFixed(1)})` : "nowhere";
  from.textContent = `The hub has it at ${where}`
    + (gateway?.venueFilePosition ? `, placed there from this panel (the venue file says `
      + `(${gateway.venueFilePosition[0].toFixed(1)}, ${gateway.venueFilePosition[1].toFixed(1)}))` : "")
    + (estimate ? "; the boxes hold where its links place it." : ".")
    + " Placing it is a calibration version: the map, its links and the plan take the new place at once, and the "
    + "calibration page rolls it back.";
  const who = document.getElementById("gateway-place-who");
  if (!who.value) {
    try { who.value = localStorage.getItem("beacontracker-who") || ""; } catch { /* private mode */ }
  }
}

async function placeGateway() {
  const id = state.selectedGateway;
  const result = document.getElementById("gateway-place-result");
  if (!id) return;
  const [x, y] = ["gateway-place-x", "gateway-place-y"].map(field => {
    const text = document.getElementById(field).value.trim();
    return text === "" ? NaN : Number(text);
  });
  const who = document.getElementById("gateway-place-who").value.trim();
  if (!Number.isFinite(x) || !Number.isFinite(y)) {
    result.textContent = "not done: give x and y in metres, as on the plan";
    return;
  }
  if (!who) {
    result.textContent = "not done: give your name (the version records it)";
    return;
  }
  try { localStorage.setItem("beacontracker-who", who); } catch { /* private mode: nothing kept */ }
  result.textContent = "…";
  try {
    const done = await api(`/api/gateways/${encodeURIComponent(id)}/place`, "POST", { x, y, who });
    const said = `placed at (${done.x.toFixed(1)}, ${done.y.toFixed(1)})`
      + (done.zone ? ` in ${zoneName(done.zone)}` : ", in no zone")
      + `, ${done.movedMetres.toFixed(1)} m from where it was: version ${done.version.version}`
      + (done.alertCleared ? `; ${done.alertCleared.code} cleared` : "")
      + `; ${done.linksForgotten} links forgotten, their new levels settle over the next two fits.`;
    // The plan redrawn with the new place before saying so.
    try {
      state.venue = await api("/api/venue");
      drawPlan();
      drawTags();
      state.gateways.forEach(drawGateway);
      fillPlaceForm(state.venue.gateways.find(entry => entry.id === id));
      result.textContent = said;
    } catch (error) {
      result.textContent = `${said} (reload the page to see it on the plan: ${error.message})`;
    }
  } catch (error) {
    result.textContent = `not done: ${error.message}`;
  }
}

async function relearnGateway() {
  const id = state.selectedGateway;
  const result = document.getElementById("gateway-relearn-result");
  if (!id) return;
  result.textContent = "…";
  try {
    const done = await api(`/api/gateways/${encodeURIComponent(id)}/relearn`, "POST");
    result.textContent = (done.alertCleared ? `${done.alertCleared.code} cleared; ` : "")
      + `${done.linksForgotten} links forgotten: their new levels settle over the next two fits.`;
  } catch (error) {
    result.textContent = `not done: ${error.message}`;
  }
}

// "+2.3 ± 1.1 dB, applied (fit 14:05)": the links' fit of its receive gain, or why there is none; for a gateway
// whose antenna faces one way, the gain straight ahead and the fitted front-to-back ratio.
function gainText(gain) {
  if (!gain) return "not fitted (no links to other gateways yet)";
  const sign = gain.value > 0 ? "+" : gain.value < 0 ? "−" : "±";
  const antenna = gain.frontToBack
    ? ` straight ahead, antenna ${gain.frontToBack.value.toFixed(1)} ± ${gain.frontToBack.sigma.toFixed(1)} dB`
      + " front-to-back" : "";
  return `${sign}${Math.abs(gain.value).toFixed(1)} ± ${gain.sigma.toFixed(1)} dB${antenna}, `
    + (gain.applied ? "applied" : "not applied") + ` (fit ${time(gain.t)})`;
}

async function selectGateway(id) {
  if (state.selectedGateway !== id) {
    document.getElementById("gateway-relearn-result").textContent = "";
    document.getElementById("gateway-place-result").textContent = "";
  }
  state.selectedGateway = id;
  state.selectedTag = null;
  state.selectedZone = null;
  document.getElementById("path-layer").replaceChildren();
  drawTags();
  state.gateways.forEach(drawGateway);
  openDetails(id, "gateway");
  drawGatewayPanel();
  const gain = document.getElementById("gateway-gain");
  gain.textContent = "…";
  try {
    const venue = await api("/api/venue");
    const gateway = venue.gateways.find(entry => entry.id === id);
    document.getElementById("gateway-beacon-row").hidden = !gateway?.beacon;
    document.getElementById("gateway-beacon").textContent = gateway?.beacon ?? "";
    gain.textContent = gainText(gateway?.gain);
    fillPlaceForm(gateway);
  } catch (error) {
    gain.textContent = `unknown: ${error.message}`;
  }
}

function addEvent(event) {
  const list = document.getElementById("events");
  const item = document.createElement("li");
  item.dataset.type = event.type;
  const what = event.type === "alert"
    ? `alert ${event.code ?? ""} ${event.gateway ?? ""}: ${event.reason}`
    : `${event.tag ?? ""} ${event.type} ${event.zone ?? event.previousZone ?? ""}`
      + (event.dwellSeconds != null ? ` (${duration(event.dwellSeconds)})` : "");
  item.textContent = `${time(event.t)} ${what}`;
  list.prepend(item);
  while (list.children.length > 100) list.lastChild.remove();
}

function showHealth(health) {
  // beacon-hub serve neither calibrates nor places gateways (the hub's own dashboard does): no controls for it.
  state.role = health.role;
  document.getElementById("calibrate-link").hidden = health.role === "serve";
  document.getElementById("gateway-place").hidden = health.role === "serve";
  const badge = document.getElementById("hub-health");
  const ready = health.role === "active" && health.mqttConnected && health.storeWritable !== false;
  const broker = health.role === "active" && !health.mqttConnected ? ", broker unreachable" : "";
  badge.textContent = ready ? "hub ready" : `hub ${health.role}${broker}`
    + (health.storeWritable === false ? ", database not writable" : "");
  badge.className = `badge ${ready ? "ok" : "bad"}`;
}

// MARK: Details

function openDetails(title, which) {
  document.getElementById("details").hidden = false;
  document.getElementById("details-title").textContent = title;
  document.getElementById("tag-details").hidden = which !== "tag";
  document.getElementById("zone-details").hidden = which !== "zone";
  document.getElementById("gateway-details").hidden = which !== "gateway";
  if (which !== "gateway") unselectGateway();
}

function unselectGateway() {
  const previous = state.selectedGateway;
  state.selectedGateway = null;
  const health = previous && state.gateways.get(previous);
  if (health) drawGateway(health);
}

async function selectTag(id) {
  state.selectedTag = id;
  state.selectedZone = null;
  drawTags();  // with the panel's live part (drawTagPanel)
  openDetails(id, "tag");
  const timeline = document.getElementById("tag-timeline");
  timeline.replaceChildren();
  const layer = document.getElementById("path-layer");
  layer.replaceChildren();
  try {
    const path = await api(`/api/tags/${encodeURIComponent(id)}/path?limit=1000`
      + (state.windowHours ? windowQuery() : `&since=0`));
    for (const visit of path.visits) {
      const item = document.createElement("li");
      item.dataset.zone = visit.zone;
      item.textContent = `${time(visit.enter)}–${visit.exit ? time(visit.exit) : "now"} ${zoneName(visit.zone)}`
        + (visit.duration != null ? ` (${duration(visit.duration)})` : "") + (visit.suspect ? " ⚠" : "");
      timeline.appendChild(item);
    }
    const points = path.visits.map(visit => state.zones.get(visit.zone)?.centre).filter(Boolean);
    if (points.length > 1) element("polyline", { class: "path", points: points.map(p => p.join(",")).join(" ") }, layer);
    if (!path.visits.length) timeline.innerHTML = `<li class="muted">No visits recorded in ${windowText()}.</li>`;
  } catch (error) {
    timeline.innerHTML = "";
    const item = document.createElement("li");
    item.className = "muted";
    item.textContent = `No history: ${error.message}`;
    timeline.appendChild(item);
  }
}

function zoneName(id) {
  return state.zones.get(id)?.name ?? id;
}

async function selectZone(id) {
  state.selectedZone = id;
  state.selectedTag = null;
  document.getElementById("path-layer").replaceChildren();
  drawTags();
  openDetails(zoneName(id), "zone");
  const occupancy = state.occupancy.get(id);
  document.getElementById("zone-summary").textContent =
    `${occupancy?.count ?? 0} ${(occupancy?.count ?? 0) === 1 ? "tag" : "tags"} now` + (occupancy?.tags?.length ? `: ${occupancy.tags.join(", ")}` : "");
  const canvas = document.getElementById("dwell-chart");
  const empty = document.getElementById("dwell-empty");
  const routes = document.getElementById("zone-routes");
  routes.replaceChildren();
  try {
    const [dwell, common] = await Promise.all([
      api(`/api/dwell?by=hour-of-day&zone=${encodeURIComponent(id)}${windowQuery()}`),
      api(`/api/routes?top=200&length=3${windowQuery()}`),
    ]);
    const hours = [...Array(24).keys()];
    const byHour = new Map(dwell.rows.map(row => [row.hourOfDay, row]));
    empty.hidden = dwell.rows.length > 0;
    const data = {
      labels: hours.map(hour => `${String(hour).padStart(2, "0")}h`),
      datasets: [
        { label: "median dwell (min)", data: hours.map(hour => (byHour.get(hour)?.median ?? 0) / 60),
          backgroundColor: "#2f6fde" },
        { label: "p90 dwell (min)", data: hours.map(hour => (byHour.get(hour)?.p90 ?? 0) / 60),
          backgroundColor: "#a9c3f3" },
      ],
    };
    if (typeof Chart === "undefined") {
      empty.hidden = false;
      empty.textContent = "Charts need Chart.js (Debian's libjs-chart.js) on the hub.";
    } else if (state.dwellChart) {
      state.dwellChart.data = data;
      state.dwellChart.update();
    } else {
      state.dwellChart = new Chart(canvas, {
        type: "bar", data,
        options: { animation: false, maintainAspectRatio: false, scales: { y: { beginAtZero: true } } },
      });
    }
    canvas.dataset.zone = id;
    canvas.dataset.visits = String(dwell.rows.reduce((sum, row) => sum + row.visits, 0));
    const through = common.routes.filter(route => route.zones.includes(id)).slice(0, 5);
    for (const route of through) {
      const item = document.createElement("li");
      item.textContent = `${route.zones.map(zoneName).join(" → ")} (${route.count}×)`;
      routes.appendChild(item);
    }
    if (!through.length) routes.innerHTML = "<li class=\"muted\">No routes through this zone yet.</li>";
  } catch (error) {
    empty.hidden = false;
    empty.textContent = `No history: ${error.message}`;
  }
}

// MARK: A tag's health (the tag panel and the Tags view)

// Why a tag has no battery reading: iBeacon and AltBeacon send no telemetry; an Eddystone tag may not have sent a
// TLM frame yet, or one without the battery.
function noBattery(tag, short) {
  const kind = (tag.beacon || "").split(":")[0];
  const named = { ibeacon: "iBeacon", altbeacon: "AltBeacon" }[kind];
  if (named) return short ? `no TLM (${named})` : `no telemetry (${named} sends none)`;
  if (tag.telemetry) return short ? "not in TLM" : "not in its telemetry";
  return short ? "no TLM yet" : "no telemetry heard yet";
}

function trendText(trend) {
  return trend == null ? "" : `${trend > 0 ? "+" : ""}${trend.toFixed(1)}`;
}

function batteryText(tag) {
  const battery = tag.battery;
  if (!battery) return noBattery(tag, false);
  return `${battery.milliVolts} mV · ${battery.level}`
    + (battery.trendPerWeek != null ? ` · ${trendText(battery.trendPerWeek)} mV/week` : "")
    + ` (read ${ago(battery.t)})`;
}

function telemetryText(telemetry) {
  const parts = [];
  if (telemetry.temperatureCelsius != null) parts.push(`${telemetry.temperatureCelsius.toFixed(1)} °C`);
  if (telemetry.secondsSinceBoot != null) parts.push(`up ${duration(telemetry.secondsSinceBoot)}`);
  if (telemetry.advertisingCount != null) parts.push(`${telemetry.advertisingCount} adverts`);
  return `${parts.join(", ") || "no fields"} (${ago(telemetry.t)})`;
}

function lastSeenText(tag) {
  if (tag.lastSeen == null) return "never heard";
  return `${ago(tag.lastSeen)} (${dateTime(tag.lastSeen)})`
    + (tag.lastSeenZone ? ` in ${zoneName(tag.lastSeenZone)}` : "")
    + (tag.lastSeenGateway ? ` by ${tag.lastSeenGateway}` : "");
}

// Advertisements a minute heard by the best gateway, against those the tag sends when known: "54 of 60 a minute (90 %)".
function advertsText(adverts) {
  const seen = Math.round(adverts.seenPerMinute);
  if (adverts.expectedPerMinute == null) return `${seen} a minute`;
  const expected = Math.round(adverts.expectedPerMinute);
  const share = adverts.expectedPerMinute > 0 ? Math.round(100 * adverts.seenPerMinute / adverts.expectedPerMinute) : 0;
  return `${seen} of ${expected} a minute (${share} %)`;
}

// What the Tags view sorts the Heard column by: the share heard where the rate sent is known; else the rate heard,
// offset so that those tags come after every share (a share is at most a little over 1) and among themselves by rate.
function advertsShare(adverts) {
  if (!adverts) return null;
  return adverts.expectedPerMinute > 0
    ? adverts.seenPerMinute / adverts.expectedPerMinute
    : 1000 + adverts.seenPerMinute;
}

// The open tag panel's live part (its state, battery, telemetry, last seen): redrawn with each change and as time
// passes; the path below it is loaded once per selection.
function drawTagPanel() {
  const id = state.selectedTag;
  if (!id) return;
  const tag = state.tags.get(id);
  document.getElementById("tag-summary").textContent = tag
    ? `${tag.state}${tag.zone ? " in " + zoneName(tag.zone) : ""} since ${time(tag.since)}, proximity ${tag.proximity}`
    : "";
  document.getElementById("tag-missing").hidden = !tag?.missing;
  document.getElementById("tag-health").hidden = !tag;
  if (!tag) return;
  const battery = document.getElementById("tag-battery");
  battery.textContent = batteryText(tag);
  battery.className = tag.battery ? (tag.battery.level === "low" ? "low" : "") : "muted";
  document.getElementById("tag-telemetry-row").hidden = !tag.telemetry;
  if (tag.telemetry) document.getElementById("tag-telemetry").textContent = telemetryText(tag.telemetry);
  document.getElementById("tag-last-seen").textContent = lastSeenText(tag);
  document.getElementById("tag-adverts-row").hidden = !tag.adverts;
  if (tag.adverts) document.getElementById("tag-adverts").textContent = advertsText(tag.adverts);
}

// The Tags view's columns: the value each sorts by. null (no value) sorts last either way: an unknown battery is
// neither the lowest nor the highest. A tag never heard is the longest unheard.
const tagColumns = {
  tag: tag => tag.tag,
  state: tag => `${tag.state} ${tag.zone ? zoneName(tag.zone) : ""}`,
  battery: tag => tag.battery ? tag.battery.milliVolts : null,
  level: tag => tag.battery ? (tag.battery.level === "low" ? 0 : 1) : null,
  trend: tag => tag.battery?.trendPerWeek ?? null,
  lastSeen: tag => tag.lastSeen ?? -Infinity,
  lastSeenZone: tag => tag.lastSeenZone ? zoneName(tag.lastSeenZone) : null,
  lastSeenGateway: tag => tag.lastSeenGateway ?? null,
  adverts: tag => advertsShare(tag.adverts),
  missing: tag => tag.missing ? 0 : 1,
};

function compareTags(a, b) {
  const { key, descending } = state.tagSort;
  const x = tagColumns[key](a), y = tagColumns[key](b);
  if (x !== y) {
    if (x == null || y == null) return x == null ? 1 : -1;
    const order = x < y ? -1 : 1;
    return descending ? -order : order;
  }
  return a.tag < b.tag ? -1 : a.tag > b.tag ? 1 : 0;
}

function badge(text, kind) {
  const node = document.createElement("span");
  node.className = `badge ${kind}`;
  node.textContent = text;
  return node;
}

function sortTagsBy(key) {
  state.tagSort = { key, descending: state.tagSort.key === key && !state.tagSort.descending };
  drawTagsTable();
}

function drawTagsTable() {
  if (document.getElementById("tags-view").hidden) return;
  const tags = [...state.tags.values()].sort(compareTags);
  const body = document.querySelector("#tags-table tbody");
  // Rows are kept per tag and moved into order, not made anew: a click never lands on a row just replaced.
  const rows = new Map([...body.children].map(row => [row.dataset.tag, row]));
  for (const tag of tags) {
    let row = rows.get(tag.tag);
    rows.delete(tag.tag);
    if (!row) {
      row = document.createElement("tr");
      row.dataset.tag = tag.tag;
      for (const name of ["tag", "state", "num battery", "level", "num trend", "last-seen", "last-zone", "gateway",
        "num adverts", "missing-flag"]) {
        const cell = document.createElement("td");
        cell.className = name;
        row.appendChild(cell);
      }
    }
    const low = tag.battery?.level === "low";
    row.className = [low && "low", tag.missing && "missing", state.selectedTag === tag.tag && "selected"]
      .filter(Boolean).join(" ");
    const [name, where, battery, level, trend, lastSeen, lastZone, gateway, adverts, missing] = row.children;
    name.textContent = tag.tag;
    name.title = tag.beacon;
    where.textContent = tag.state + (tag.zone ? ` · ${zoneName(tag.zone)}` : "");
    battery.textContent = tag.battery ? String(tag.battery.milliVolts) : "–";
    battery.title = tag.battery ? `read ${ago(tag.battery.t)}` : noBattery(tag, false);
    level.classList.toggle("muted", !tag.battery);
    if (low) level.replaceChildren(badge("low", "low"));
    else level.textContent = tag.battery ? tag.battery.level : noBattery(tag, true);
    trend.textContent = trendText(tag.battery?.trendPerWeek);
    lastSeen.textContent = ago(tag.lastSeen);
    lastSeen.title = tag.lastSeen != null ? dateTime(tag.lastSeen) : "";
    lastZone.textContent = tag.lastSeenZone ? zoneName(tag.lastSeenZone) : "";
    gateway.textContent = tag.lastSeenGateway ?? "";
    adverts.textContent = tag.adverts
      ? Math.round(tag.adverts.seenPerMinute) + (tag.adverts.expectedPerMinute != null
        ? ` / ${Math.round(tag.adverts.expectedPerMinute)}` : "")
      : "–";
    adverts.title = tag.adverts ? advertsText(tag.adverts) : "not yet counted";
    if (tag.missing) missing.replaceChildren(badge("missing", "bad"));
    else missing.replaceChildren();
    body.appendChild(row);
  }
  for (const gone of rows.values()) gone.remove();
  for (const header of document.querySelectorAll("#tags-table th[data-sort]")) {
    if (header.dataset.sort === state.tagSort.key) {
      header.setAttribute("aria-sort", state.tagSort.descending ? "descending" : "ascending");
    } else {
      header.removeAttribute("aria-sort");
    }
  }
  const lowCount = tags.filter(tag => tag.battery?.level === "low").length;
  const missingCount = tags.filter(tag => tag.missing).length;
  document.getElementById("tags-count").textContent =
    `${tags.length} ${tags.length === 1 ? "tag" : "tags"} · ${lowCount} low battery · ${missingCount} missing`;
  // The export in the table's order where the API sorts that way (tag, battery, last seen ascending), else by
  // battery. A plain link cannot send the Authorization header: the token goes as access_token.
  const { key, descending } = state.tagSort;
  const sort = !descending && ["tag", "battery", "lastSeen"].includes(key) ? key : "battery";
  document.getElementById("tags-csv").href = `/api/tags.csv?sort=${sort}`
    + (token ? `&access_token=${encodeURIComponent(token)}` : "");
}

// The page's two views: the floor plan (no fragment) and the Tags view (#tags); the side bar stays with both.
function showView() {
  const tags = location.hash === "#tags";
  document.getElementById("plan-section").hidden = tags;
  document.getElementById("tags-view").hidden = !tags;
  for (const [id, current] of [["plan-link", !tags], ["tags-link", tags]]) {
    const link = document.getElementById(id);
    if (current) link.setAttribute("aria-current", "page"); else link.removeAttribute("aria-current");
  }
  drawTagsTable();
}

// MARK: Live

function applySnapshot(snapshot) {
  state.tags = new Map(snapshot.tags.map(tag => [tag.tag, tag]));
  state.occupancy = new Map(snapshot.occupancy.map(zone => [zone.zone, zone]));
  snapshot.gateways.forEach(drawGateway);
  showHealth(snapshot.health);
  document.getElementById("events").replaceChildren();
  snapshot.events.forEach(addEvent);
  drawTags();
}

function tagView(state) {
  const best = [...(state.gateways || [])].sort((a, b) => b.rssi - a.rssi)[0];
  return { ...state, proximity: best ? best.proximity : "unknown" };
}

function connect() {
  const indicator = document.getElementById("stream-state");
  const source = new EventSource("/api/stream" + (token ? `?access_token=${encodeURIComponent(token)}` : ""));
  let pending = false;
  const redraw = () => {
    if (pending) return;
    pending = true;
    requestAnimationFrame(() => { pending = false; drawTags(); });
  };
  source.addEventListener("open", () => { indicator.textContent = "live"; indicator.className = "badge ok"; });
  source.addEventListener("error", async () => {
    indicator.className = "badge bad";
    if (source.readyState !== EventSource.CLOSED) { indicator.textContent = "reconnecting…"; return; }
    // The browser gives up on an answer other than a stream (a 401, a proxy's error page): say why, retry later.
    source.close();
    try {
      await api("/api/hub");
      indicator.textContent = "stream refused: retrying";
    } catch (error) {
      indicator.textContent = `stream refused: ${error.message}`;
    }
    setTimeout(connect, 5000);
  });
  source.addEventListener("snapshot", message => applySnapshot(JSON.parse(message.data)));
  source.addEventListener("tag", message => {
    const tag = JSON.parse(message.data);
    state.tags.set(tag.tag, tagView(tag));
    redraw();
  });
  source.addEventListener("occupancy", message => {
    const occupancy = JSON.parse(message.data);
    state.occupancy.set(occupancy.zone, occupancy);
    redraw();
  });
  source.addEventListener("event", message => addEvent(JSON.parse(message.data)));
  source.addEventListener("gateways", message => JSON.parse(message.data).forEach(drawGateway));
  source.addEventListener("health", message => showHealth(JSON.parse(message.data)));
}

// MARK: Sites (a shared history holds several)

// Dwell per zone of the chosen site (or of every site, side by side) over the history window, and each site's
// busiest hour of the day.
async function loadSites() {
  const site = document.getElementById("site-select").value;
  const body = document.querySelector("#sites-table tbody");
  const busiest = document.getElementById("sites-busiest");
  try {
    const [byZone, byHour] = await Promise.all([
      api(`/api/dwell?by=zone&site=${encodeURIComponent(site)}${windowQuery()}`),
      api(`/api/dwell?by=hour-of-day&site=${encodeURIComponent(site)}${windowQuery()}`),
    ]);
    body.replaceChildren();
    for (const row of byZone.rows) {
      const line = document.createElement("tr");
      for (const text of [row.site ?? site, row.zone, row.visits, duration(row.median), duration(row.p90)]) {
        const cell = document.createElement("td");
        cell.textContent = text;
        line.appendChild(cell);
      }
      body.appendChild(line);
    }
    const visitsByHour = new Map();
    for (const row of byHour.rows) {
      const name = row.site ?? site;
      if (!visitsByHour.has(name)) visitsByHour.set(name, new Array(24).fill(0));
      visitsByHour.get(name)[row.hourOfDay] += row.visits;
    }
    busiest.textContent = [...visitsByHour.entries()].map(([name, hours]) => {
      const hour = hours.indexOf(Math.max(...hours));
      return `${name}: busiest ${String(hour).padStart(2, "0")}:00 (${hours[hour]} visits)`;
    }).join(" · ") || `No closed visits in ${windowText()}.`;
  } catch (error) {
    busiest.textContent = `cannot read the sites' history: ${error.message}`;
  }
}

async function startSites() {
  let listed;
  try {
    listed = await api("/api/sites");
  } catch {
    return;  // no history, or no token yet: the section stays hidden
  }
  if (listed.sites.length < 2) return;
  const select = document.getElementById("site-select");
  for (const site of listed.sites) {
    const option = document.createElement("option");
    option.value = option.textContent = site;
    select.appendChild(option);
  }
  select.addEventListener("change", loadSites);
  document.getElementById("sites-section").hidden = false;
  await loadSites();
}

async function start() {
  document.getElementById("details-close").addEventListener("click", () => {
    document.getElementById("details").hidden = true;
    unselectGateway();
    state.selectedTag = state.selectedZone = null;
    document.getElementById("path-layer").replaceChildren();
    drawTags();
  });
  document.getElementById("gateway-relearn").addEventListener("click", relearnGateway);
  document.getElementById("gateway-place-button").addEventListener("click", placeGateway);
  try {
    state.venue = await api("/api/venue");
  } catch (error) {
    document.getElementById("hub-health").textContent = `cannot read the venue: ${error.message}`;
    document.getElementById("hub-health").className = "badge bad";
    return;
  }
  const windowSelect = document.getElementById("window");
  windowSelect.value = String(state.windowHours);
  windowSelect.addEventListener("change", () => {
    state.windowHours = Number(windowSelect.value);
    if (state.selectedTag) selectTag(state.selectedTag);
    else if (state.selectedZone) selectZone(state.selectedZone);
    if (!document.getElementById("sites-section").hidden) loadSites();
  });
  document.getElementById("venue-name").textContent = state.venue.name;
  document.title = `${state.venue.name} · BeaconTracker`;
  drawPlan();
  drawZonesTable();
  for (const header of document.querySelectorAll("#tags-table th[data-sort]")) {
    header.addEventListener("click", () => sortTagsBy(header.dataset.sort));
    header.addEventListener("keydown", event => {
      if (event.key !== "Enter" && event.key !== " ") return;
      event.preventDefault();
      sortTagsBy(header.dataset.sort);
    });
  }
  document.querySelector("#tags-table tbody").addEventListener("click", event => {
    const row = event.target.closest("tr[data-tag]");
    if (row) selectTag(row.dataset.tag);
  });
  window.addEventListener("hashchange", showView);
  showView();
  // "5 min ago" grows without a message from the hub.
  setInterval(() => { drawTagsTable(); drawTagPanel(); drawGatewayPanel(); }, 5000);
  connect();
  startSites();
}

start();
