// Shared by the dashboard (app.js) and the calibration page (calibrate.js), loaded before either: the API token, and
// the floor plan's geometry in venue metres (y down). Plain JavaScript, no build step.
"use strict";

const SVG = "http://www.w3.org/2000/svg";

// A token given once as #token=… is kept for this tab (the hub needs one when it listens beyond loopback); both pages
// use the same key, so a tab that opened one with it needs nothing more on the other.
const token = (() => {
  const match = location.hash.match(/token=([^&]+)/);
  if (match) {
    sessionStorage.setItem("beacontracker-token", decodeURIComponent(match[1]));
    history.replaceState(null, "", location.pathname);
  }
  return sessionStorage.getItem("beacontracker-token");
})();

function element(name, attributes = {}, parent = null) {
  const node = document.createElementNS(SVG, name);
  for (const [key, value] of Object.entries(attributes)) node.setAttribute(key, value);
  if (parent) parent.appendChild(node);
  return node;
}

// The segment of a wall or zone edge nearest to `point`, as [from, to], or null when there is none.
function nearestSegment(point, segments) {
  let best = null, bestDistance = Infinity;
  for (const [a, b] of segments) {
    const dx = b[0] - a[0], dy = b[1] - a[1], length2 = dx * dx + dy * dy;
    if (length2 === 0) continue;
    const t = Math.max(0, Math.min(1, ((point[0] - a[0]) * dx + (point[1] - a[1]) * dy) / length2));
    const distance = Math.hypot(a[0] + t * dx - point[0], a[1] + t * dy - point[1]);
    if (distance < bestDistance) { bestDistance = distance; best = [a, b]; }
  }
  return best;
}

// The extent of everything drawn (zones, walls, gateways), so that zones laid out without a venue file fit too.
function extent(venue, shapes) {
  const xs = [], ys = [];
  const add = p => { xs.push(p[0]); ys.push(p[1]); };
  shapes.forEach(shape => shape.forEach(add));
  (venue.walls || []).forEach(wall => { add(wall.from); add(wall.to); });
  (venue.gateways || []).forEach(gateway => gateway.position && add(gateway.position));
  if (venue.bounds) { add([venue.bounds.minX, venue.bounds.minY]); add([venue.bounds.maxX, venue.bounds.maxY]); }
  if (!xs.length) return { minX: 0, minY: 0, maxX: 10, maxY: 10 };
  return { minX: Math.min(...xs), minY: Math.min(...ys), maxX: Math.max(...xs), maxY: Math.max(...ys) };
}

function polygonGeometry(shape) {
  const xs = shape.map(p => p[0]), ys = shape.map(p => p[1]);
  const box = { minX: Math.min(...xs), minY: Math.min(...ys), maxX: Math.max(...xs), maxY: Math.max(...ys) };
  // The area-weighted centroid (the vertex mean for degenerate shapes).
  let area = 0, cx = 0, cy = 0;
  for (let i = 0; i < shape.length; i++) {
    const [x0, y0] = shape[i], [x1, y1] = shape[(i + 1) % shape.length];
    const cross = x0 * y1 - x1 * y0;
    area += cross; cx += (x0 + x1) * cross; cy += (y0 + y1) * cross;
  }
  const centre = Math.abs(area) > 1e-9
    ? [cx / (3 * area), cy / (3 * area)]
    : [xs.reduce((a, b) => a + b, 0) / xs.length, ys.reduce((a, b) => a + b, 0) / ys.length];
  return { box, centre };
}

// Zones without a shape (a hub without a venue file) are laid out in a row of 5 m squares.
function zoneShapes(venue) {
  return venue.zones.map((zone, index) => zone.shape.length >= 3 ? zone.shape
    : [[index * 6, 0], [index * 6 + 5, 0], [index * 6 + 5, 5], [index * 6, 5]]);
}

// A door is a gap of its width in the nearest wall (or zone edge): the ends of that gap, {x1, y1, x2, y2}.
function doorEnds(door, venue, shapes) {
  const segments = (venue.walls || []).map(wall => [wall.from, wall.to]).concat(
    shapes.flatMap(shape => shape.map((point, i) => [point, shape[(i + 1) % shape.length]])));
  const segment = nearestSegment(door.at, segments);
  const [a, b] = segment || [[door.at[0] - 1, door.at[1]], [door.at[0] + 1, door.at[1]]];
  const length = Math.hypot(b[0] - a[0], b[1] - a[1]);
  const ux = (b[0] - a[0]) / length, uy = (b[1] - a[1]) / length, half = door.width / 2;
  return { x1: door.at[0] - ux * half, y1: door.at[1] - uy * half, x2: door.at[0] + ux * half, y2: door.at[1] + uy * half };
}
