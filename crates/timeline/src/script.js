// The timeline's zoom: the body of a function of ID (the fragment's id), TOTAL (the run's
// length in microseconds), LABELS and PLOT (the label column's and the plot's widths in the
// SVG's units), TOP (the axis' height) and LANE (a lane's height). Zooming and panning change
// the plot's viewBox (x in microseconds) and redraw the axis; the overview's marks are never
// touched. When the fragment embeds a finer record (ID-detail: base64 of raw deflate of
// JSON), zooming in inflates it once and draws the marks in view from it instead of the
// overview's. The page's address follows the zoom (#ID=FROM-TO in seconds, several
// timelines' parts joined by &), and an address with it opens the timeline so zoomed and
// scrolled into view.
"use strict";
var svg = document.getElementById(ID + "-svg");
var plot = document.getElementById(ID + "-plot");
var axis = document.getElementById(ID + "-axis");
var range = document.getElementById(ID + "-range");
var section = document.getElementById(ID);
var coarse = document.getElementById(ID + "-coarse");
var fine = document.getElementById(ID + "-fine");
var source = document.getElementById(ID + "-detail");
var detailNote = document.getElementById(ID + "-detail-note");
if (!svg || !plot || !axis) {
  return;
}
// The most marks drawn from the finer record at once; past it the overview stays.
var MAX_FINE = 20000;
var detail = null, loading = false, pending = false;
var NS = "http://www.w3.org/2000/svg";
var height = parseFloat(plot.getAttribute("height")) || 0;
var minWidth = Math.min(1, TOTAL);
var view = { from: 0, width: TOTAL };

function step(width) {
  var raw = Math.max(width / 10, 1e-3);
  var power = Math.pow(10, Math.floor(Math.log10(raw)));
  var mantissa = raw / power;
  var nice = mantissa <= 1 ? 1 : mantissa <= 2 ? 2 : mantissa <= 5 ? 5 : 10;
  return nice * power;
}

// A tick's time: in seconds for steps of a tenth of a second or more, else in milliseconds,
// with as many decimals as the step needs (as the page was first drawn).
function label(at, tick) {
  var value = at / 1e3, unitStep = tick / 1e3, unit = "ms";
  if (tick >= 1e5) {
    value = at / 1e6; unitStep = tick / 1e6; unit = "s";
  }
  var decimals = Math.min(6, Math.max(0, -Math.floor(Math.log10(unitStep))));
  return value.toFixed(decimals) + " " + unit;
}

function span(micros) {
  if (micros >= 1e6) return (micros / 1e6).toPrecision(3) + " s";
  if (micros >= 1e3) return (micros / 1e3).toPrecision(3) + " ms";
  return micros.toPrecision(3) + " \u00b5s";
}

function drawAxis() {
  while (axis.firstChild) {
    axis.removeChild(axis.firstChild);
  }
  var tick = step(view.width);
  var first = Math.ceil(view.from / tick) * tick;
  for (var i = 0; i <= 100; i++) {
    var at = first + i * tick;
    if (at > view.from + view.width) break;
    var x = (LABELS + (at - view.from) / view.width * PLOT).toFixed(1);
    var line = document.createElementNS(NS, "line");
    line.setAttribute("class", "ioslice-tl-tick");
    line.setAttribute("x1", x);
    line.setAttribute("x2", x);
    line.setAttribute("y1", TOP - 4);
    line.setAttribute("y2", TOP + height);
    axis.appendChild(line);
    var text = document.createElementNS(NS, "text");
    text.setAttribute("x", x);
    text.setAttribute("y", TOP - 8);
    text.textContent = label(at, tick);
    axis.appendChild(text);
  }
}

function zoomed() {
  return view.width < TOTAL * 0.999;
}

function showOverview() {
  if (coarse) coarse.style.display = "";
  if (fine) {
    fine.style.display = "none";
    while (fine.firstChild) fine.removeChild(fine.firstChild);
  }
  if (section) section.setAttribute("data-detail", source ? "overview" : "none");
}

// Inflate the finer record, then draw from it.
function load() {
  if (detail || loading || !source) return;
  if (typeof DecompressionStream === "undefined" || typeof Blob === "undefined") {
    source = null;
    if (detailNote) detailNote.textContent = "This browser cannot inflate the finer record; the overview is drawn at every zoom.";
    return;
  }
  loading = true;
  var raw = atob(source.textContent.trim());
  var bytes = new Uint8Array(raw.length);
  for (var i = 0; i < raw.length; i++) bytes[i] = raw.charCodeAt(i);
  var stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("deflate-raw"));
  new Response(stream).text().then(function (text) {
    detail = JSON.parse(text);
    loading = false;
    drawDetail();
  }).catch(function (error) {
    loading = false;
    source = null;
    if (detailNote) detailNote.textContent = "The finer record could not be read (" + error + "); the overview is drawn at every zoom.";
    showOverview();
  });
}

// The finer record's marks in view, in band order, in place of the overview's.
function drawDetail() {
  pending = false;
  if (!source || !fine || !coarse) return;
  if (!zoomed()) {
    showOverview();
    return;
  }
  if (!detail) {
    load();
    return;
  }
  var from = view.from, to = view.from + view.width;
  var picked = [];
  var marks = detail.marks;
  for (var i = 0; i < marks.length && marks[i][1] <= to; i++) {
    if (marks[i][1] + marks[i][2] >= from) {
      picked.push(i);
      if (picked.length > MAX_FINE) break;
    }
  }
  if (picked.length > MAX_FINE) {
    showOverview();
    if (range) range.textContent += " \u2014 overview: zoom in further for the finer record";
    return;
  }
  picked.sort(function (a, b) {
    return (detail.kinds[marks[a][3]][3] - detail.kinds[marks[b][3]][3]) || (a - b);
  });
  while (fine.firstChild) fine.removeChild(fine.firstChild);
  var parts = document.createDocumentFragment();
  picked.forEach(function (index) {
    var mark = marks[index];
    var kind = detail.kinds[mark[3]];
    var rect = document.createElementNS(NS, "rect");
    rect.setAttribute("class", "tl-" + kind[0]);
    rect.setAttribute("x", mark[1]);
    rect.setAttribute("y", mark[0] * LANE + kind[1]);
    rect.setAttribute("width", mark[2]);
    rect.setAttribute("height", kind[2]);
    if (mark[4] < 100) rect.setAttribute("fill-opacity", mark[4] / 100);
    var title = document.createElementNS(NS, "title");
    title.textContent = mark[5];
    rect.appendChild(title);
    parts.appendChild(rect);
  });
  fine.appendChild(parts);
  coarse.style.display = "none";
  fine.style.display = "";
  if (section) section.setAttribute("data-detail", "shown");
}

function scheduleDetail() {
  if (!source || pending) return;
  pending = true;
  if (window.requestAnimationFrame) window.requestAnimationFrame(drawDetail);
  else setTimeout(drawDetail, 0);
}

// Seconds, without trailing zeros.
function seconds(micros) {
  var text = (micros / 1e6).toFixed(6);
  return text.replace(/0+$/, "").replace(/\.$/, "");
}

// This timeline's part of the address follows the view; other parts are kept.
function updateLink() {
  if (!window.history || !window.history.replaceState) return;
  var parts = window.location.hash.replace(/^#/, "").split("&").filter(function (part) {
    return part && part.split("=")[0] !== ID;
  });
  if (zoomed()) parts.push(ID + "=" + seconds(view.from) + "-" + seconds(view.from + view.width));
  var hash = parts.length ? "#" + parts.join("&") : "";
  if (hash !== window.location.hash) {
    window.history.replaceState(null, "", hash || window.location.pathname + window.location.search);
  }
}

function apply() {
  view.width = Math.min(Math.max(view.width, minWidth), TOTAL);
  view.from = Math.min(Math.max(view.from, 0), TOTAL - view.width);
  plot.setAttribute("viewBox", view.from + " 0 " + view.width + " " + height);
  drawAxis();
  updateLink();
  if (source) {
    if (zoomed()) scheduleDetail();
    else showOverview();
  }
  if (range) {
    range.textContent = label(view.from, step(view.width)) + " \u2013 " +
      label(view.from + view.width, step(view.width)) + " (" + span(view.width) + " shown, \u00d7" +
      (TOTAL / view.width).toPrecision(3) + ")";
  }
}

// Where a client x falls in the plot, 0 at its left edge and 1 at its right.
function fraction(clientX) {
  var box = plot.getBoundingClientRect();
  if (box.width <= 0) return 0.5;
  return Math.min(Math.max((clientX - box.left) / box.width, 0), 1);
}

function zoom(factor, at) {
  var pivot = view.from + at * view.width;
  view.width = Math.min(Math.max(view.width * factor, minWidth), TOTAL);
  view.from = pivot - at * view.width;
  apply();
}

svg.addEventListener("wheel", function (event) {
  event.preventDefault();
  var lines = event.deltaMode === 1 ? 30 : event.deltaMode === 2 ? 300 : 1;
  zoom(Math.exp(event.deltaY * lines * 0.002), fraction(event.clientX));
}, { passive: false });

var drag = null;
svg.addEventListener("pointerdown", function (event) {
  if (event.button !== 0) return;
  drag = { x: event.clientX, from: view.from, width: plot.getBoundingClientRect().width };
  if (svg.setPointerCapture) svg.setPointerCapture(event.pointerId);
  svg.style.cursor = "grabbing";
});
svg.addEventListener("pointermove", function (event) {
  if (!drag || drag.width <= 0) return;
  view.from = drag.from - (event.clientX - drag.x) / drag.width * view.width;
  apply();
});
function release() {
  drag = null;
  svg.style.cursor = "";
}
svg.addEventListener("pointerup", release);
svg.addEventListener("pointercancel", release);
svg.addEventListener("dblclick", function (event) {
  zoom(0.5, fraction(event.clientX));
});

function button(suffix, action) {
  var element = document.getElementById(ID + suffix);
  if (element) element.addEventListener("click", action);
}
button("-in", function () { zoom(0.5, 0.5); });
button("-out", function () { zoom(2, 0.5); });
button("-reset", function () {
  view.from = 0;
  view.width = TOTAL;
  apply();
});
// A link may open the timeline zoomed: `page.html#ID=FROM-TO`, in seconds into the run
// (several timelines' views joined by `&`).
var wanted = new RegExp("(?:^#|&)" + ID.replace(/[^A-Za-z0-9_-]/g, "\\$&") +
  "=([0-9.]+)-([0-9.]+)(?:&|$)").exec(window.location.hash);
if (wanted) {
  var from = parseFloat(wanted[1]) * 1e6, to = parseFloat(wanted[2]) * 1e6;
  if (to > from) {
    view.from = from;
    view.width = to - from;
  }
}
apply();
// Scrolled to: the first timeline the address names.
var first = window.location.hash.replace(/^#/, "").split("&")[0].split("=")[0];
if (wanted && first === ID && section && section.scrollIntoView) {
  section.scrollIntoView();
  // Once laid out in full (the browser may restore its own position on load), again.
  window.addEventListener("load", function () { section.scrollIntoView(); });
}
