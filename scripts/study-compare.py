#!/usr/bin/env python3
"""One chart of several `compactsim study` runs side by side: four panels (context
occupancy, facts retained, cumulative provider cost, compaction wait per turn), one
line per compactor, over the session's turns. Reads each run's study.json, writes an
SVG (no dependency beyond the standard library; the same inputs give the same bytes).

  scripts/study-compare.py OUT.svg LABEL=DIR/study.json:STRATEGY ...

e.g. `"Hermes batch=/tmp/hb/study.json:batch"`. Every run must be of the same study
(name, seed, turns); a mismatch, a missing strategy or an unreadable file exits 2.
"""

import json
import sys

PANELS = (
    ("occupancy_pct", "context occupancy (% of the batch trigger)"),
    ("facts_retained_pct", "facts retained (%)"),
    ("cost_usd_total", "cumulative provider cost (USD)"),
    ("stall_s", "compaction wait per turn (s)"),
)
COLORS = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")
PANEL_W, PANEL_H, MARGIN_L, MARGIN_T, GAP = 420, 220, 60, 40, 50
SERIES_MAX = len(COLORS)


def fail(msg):
    sys.stderr.write("study-compare.py: %s\n" % msg)
    sys.exit(2)


def load(spec):
    label, sep, rest = spec.partition("=")
    path, sep2, strategy = rest.rpartition(":")
    if not sep or not sep2 or not label or not strategy:
        fail("%r: expected LABEL=PATH:STRATEGY" % spec)
    try:
        with open(path, encoding="utf-8") as f:
            study = json.load(f)
    except (OSError, ValueError) as e:
        fail("%s: %s" % (path, e))
    for s in study.get("strategies", []):
        if s.get("name") == strategy:
            return label, study, s
    fail("%s: no strategy %r" % (path, strategy))


def scale(values_max):
    top = max(values_max, 1e-9)
    for step in (1, 2, 5, 10, 20, 25, 50, 100, 200, 250, 500, 1000):
        if top / step <= 5:
            return step * (int(top / step) + 1), step
    return top, top / 5


def panel(out, k, key, title, series, turns):
    col, row = k % 2, k // 2
    x0 = MARGIN_L + col * (PANEL_W + MARGIN_L + GAP)
    y0 = MARGIN_T + row * (PANEL_H + MARGIN_T + GAP)
    top, step = scale(max(t[key] for _, s in series for t in s["turns"]))
    out.append('<text x="%d" y="%d" font-size="13" font-weight="bold">%s</text>'
               % (x0, y0 - 10, title))
    out.append('<rect x="%d" y="%d" width="%d" height="%d" fill="none" stroke="#999"/>'
               % (x0, y0, PANEL_W, PANEL_H))
    v = 0.0
    while v <= top + 1e-9:
        y = y0 + PANEL_H - v / top * PANEL_H
        out.append('<line x1="%d" y1="%.1f" x2="%d" y2="%.1f" stroke="#eee"/>'
                   % (x0, y, x0 + PANEL_W, y))
        out.append('<text x="%d" y="%.1f" font-size="10" text-anchor="end">%g</text>'
                   % (x0 - 4, y + 3, round(v, 6)))
        v += step
    for t in (1, turns // 2, turns):
        x = x0 + (t - 1) / max(turns - 1, 1) * PANEL_W
        out.append('<text x="%.1f" y="%d" font-size="10" text-anchor="middle">turn %d</text>'
                   % (x, y0 + PANEL_H + 14, t))
    for i, (_, s) in enumerate(series):
        pts = " ".join("%.1f,%.1f" % (x0 + (t["turn"] - 1) / max(turns - 1, 1) * PANEL_W,
                                      y0 + PANEL_H - t[key] / top * PANEL_H)
                       for t in s["turns"])
        out.append('<polyline fill="none" stroke="%s" stroke-width="1.5" points="%s"/>'
                   % (COLORS[i], pts))


def main(argv):
    if len(argv) < 3:
        fail("usage: study-compare.py OUT.svg LABEL=PATH:STRATEGY ...")
    if len(argv) - 2 > SERIES_MAX:
        fail("at most %d series" % SERIES_MAX)
    runs = [load(a) for a in argv[2:]]
    _, first, _ = runs[0]
    for label, study, _ in runs:
        if (study["name"], study["seed"], study["turns"]) != \
                (first["name"], first["seed"], first["turns"]):
            fail("%s is of another study than %s" % (label, runs[0][0]))
    series = [(label, s) for label, _, s in runs]
    turns = first["turns"]
    width = 2 * (PANEL_W + MARGIN_L) + GAP + 20
    height = 2 * (PANEL_H + MARGIN_T) + GAP + 60
    out = ['<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" '
           'font-family="sans-serif">' % (width, height),
           '<rect width="100%" height="100%" fill="white"/>']
    for k, (key, title) in enumerate(PANELS):
        panel(out, k, key, title, series, turns)
    y = height - 18
    out.append('<text x="%d" y="%d" font-size="11">%s, seed %s, %d turns:</text>'
               % (MARGIN_L, y, first["name"], first["seed"], turns))
    x = MARGIN_L + 230
    for i, (label, s) in enumerate(series):
        out.append('<line x1="%d" y1="%d" x2="%d" y2="%d" stroke="%s" stroke-width="3"/>'
                   % (x, y - 4, x + 18, y - 4, COLORS[i]))
        out.append('<text x="%d" y="%d" font-size="11">%s (%s)</text>'
                   % (x + 22, y, label, s["name"]))
        x += 40 + 7 * len(label + s["name"])
    out.append("</svg>")
    with open(argv[1], "w", encoding="utf-8") as f:
        f.write("\n".join(out) + "\n")


if __name__ == "__main__":
    main(sys.argv)
