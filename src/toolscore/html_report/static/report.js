/* The case browser of a toolscore HTML report: lists, filters and opens the cases the page
   carries as JSON. Every text from the run is set with textContent: nothing it holds is ever
   read as markup. Standard DOM only, no library. */
"use strict";
(function () {
  var PAGE = 200;
  var dataNode = document.getElementById("case-data");
  if (!dataNode) return;
  var cases = JSON.parse(dataNode.textContent || "[]");
  var specNode = document.getElementById("spec-data");
  var spec = specNode ? JSON.parse(specNode.textContent || "{}") : {};
  var shownCount = PAGE;
  var matches = [];
  var $ = function (id) { return document.getElementById(id); };
  var filters = {
    search: $("f-search"), tool: $("f-tool"), arg: $("f-arg"), code: $("f-code"),
    verdict: $("f-verdict"), kind: $("f-kind"), disagree: $("f-disagree"), tag: $("f-tag")
  };
  if ($("f-rubric")) filters.rubric = $("f-rubric");
  if ($("f-turn")) filters.turn = $("f-turn");

  function el(tag, className, text) {
    var node = document.createElement(tag);
    if (className) node.className = className;
    if (text !== undefined && text !== null) node.textContent = String(text);
    return node;
  }

  function add(parent, child) { parent.appendChild(child); return child; }

  function fillOptions(select, values) {
    values.sort().forEach(function (value) {
      var option = el("option", null, value);
      option.value = value;
      select.appendChild(option);
    });
  }

  function facet(key) {
    var seen = Object.create(null);
    cases.forEach(function (c) { (c[key] || []).forEach(function (v) { seen[v] = true; }); });
    return Object.keys(seen);
  }

  fillOptions(filters.tool, facet("tools"));
  fillOptions(filters.arg, facet("args"));
  fillOptions(filters.code, facet("codes"));
  fillOptions(filters.tag, facet("tags"));
  if (filters.turn) {
    var firstTurns = Object.create(null);
    cases.forEach(function (c) {
      if (typeof c.first_failed_turn === "number") firstTurns[c.first_failed_turn] = true;
    });
    Object.keys(firstTurns).map(Number).sort(function (x, y) { return x - y; }).forEach(function (k) {
      var option = el("option", null, "turn " + k);
      option.value = String(k);
      filters.turn.appendChild(option);
    });
  }

  function has(list, value) { return (list || []).indexOf(value) >= 0; }

  function keep(c) {
    var search = filters.search.value.trim().toLowerCase();
    if (search && String(c.id).toLowerCase().indexOf(search) < 0) return false;
    if (filters.tool.value && !has(c.tools, filters.tool.value)) return false;
    if (filters.arg.value && !has(c.args, filters.arg.value)) return false;
    if (filters.code.value && !has(c.codes, filters.code.value)) return false;
    if (filters.tag.value && !has(c.tags, filters.tag.value)) return false;
    if (filters.verdict.value === "failed" && c.passed) return false;
    if (filters.verdict.value === "passed" && !c.passed) return false;
    if (filters.kind.value && c.kind !== filters.kind.value) return false;
    var d = filters.disagree.value;
    if (d === "any" && !c.disagree.length) return false;
    if (d === "none" && c.disagree.length) return false;
    if ((d === "exact" || d === "lowercase") && !has(c.disagree, d)) return false;
    if (filters.rubric && filters.rubric.value && !rubricsMatch(c.rubrics || [], filters.rubric.value)) return false;
    if (filters.turn && filters.turn.value !== "" && String(c.first_failed_turn) !== filters.turn.value) return false;
    return true;
  }

  function unscored(entry) { return entry.unscored !== null && entry.unscored !== undefined; }

  /* Whether a case's rubric entries fit the rubric filter: some failed, some unscored,
     either, or every one passed (a case with no rubric entry fits none of these). */
  function rubricsMatch(entries, wanted) {
    var failed = entries.some(function (e) { return !unscored(e) && e.passed === false; });
    var left = entries.some(unscored);
    if (wanted === "failed") return failed;
    if (wanted === "unscored") return left;
    if (wanted === "failed-or-unscored") return failed || left;
    if (wanted === "passed") return entries.length > 0 && !failed && !left;
    return true;
  }

  function rubricBlock(parent, entries) {
    var s = section(parent, "Rubrics (apart from the call score)");
    var table = add(s, el("table", "rubric-entries"));
    var head = add(add(table, el("thead")), el("tr"));
    ["rubric", "argument", "score", "result", "reason", "judgment"].forEach(function (t) {
      add(head, el("th", null, t));
    });
    var body = add(table, el("tbody"));
    entries.forEach(function (e) {
      var left = unscored(e);
      var tr = add(body, el("tr", "rubric-entry " + (left ? "unscored" : e.passed ? "passed" : "failed")));
      add(add(tr, el("td")), el("code", null, e.rubric));
      var where = add(tr, el("td"));
      add(where, el("code", null, e.tool + "." + e.argument));
      add(where, el("span", "index", " plan call " + e.plan_call +
        (e.call === null || e.call === undefined ? ", no produced call" : ", call " + e.call)));
      add(tr, el("td", "num", e.score === null || e.score === undefined ? "\u2014" : e.score));
      add(add(tr, el("td")), el("span", left ? "badge unscored" : e.passed ? "badge pass" : "badge fail",
        left ? "unscored" : e.passed ? "passed" : "failed"));
      add(tr, el("td", "reason", left ? e.unscored : e.reason));
      add(tr, el("td", "hint", e.cached ? "cached" : left ? "" : "fresh"));
    });
  }

  function verdictCell(passed) {
    return el("span", passed ? "badge pass" : "badge fail", passed ? "passed" : "failed");
  }

  function row(c, index) {
    var tr = el("tr", c.passed ? "passed" : "failed");
    tr.dataset.index = String(index);
    tr.tabIndex = 0;
    var idCell = add(tr, el("td"));
    add(idCell, el("code", "case-id", c.id));
    add(add(tr, el("td")), verdictCell(c.passed));
    add(tr, el("td", null, c.kind + (c.turns ? ", " + c.turns.length + (c.turns.length === 1 ? " turn" : " turns") +
      (typeof c.first_failed_turn === "number" ? ", failed at turn " + c.first_failed_turn : "") : "")));
    var b = c.baselines || {};
    add(tr, el("td", c.disagree.length ? "disagrees" : null,
      (b.exact ? "pass" : "fail") + " / " + (b.lowercase ? "pass" : "fail")));
    add(tr, el("td", "codes", (c.codes || []).join(", ")));
    return tr;
  }

  function refresh() {
    matches = [];
    for (var i = 0; i < cases.length; i++) if (keep(cases[i])) matches.push(i);
    var body = $("case-rows");
    body.replaceChildren();
    var limit = Math.min(shownCount, matches.length);
    for (var k = 0; k < limit; k++) body.appendChild(row(cases[matches[k]], matches[k]));
    $("shown").textContent = matches.length + " of the " + cases.length +
      " cases on this page match" + (limit < matches.length ? "; showing the first " + limit : "");
    $("more").hidden = limit >= matches.length;
  }

  function value(v) {
    if (!v) return el("span", "absent", "\u2014");
    if (v.kind === "json") return el("pre", "json", v.texts[0]);
    if (v.kind === "any") {
      var box = el("div", "any");
      add(box, el("span", "hint", "any one of"));
      v.texts.forEach(function (t) { add(box, el("pre", "json", t)); });
      return box;
    }
    if (v.kind === "ref") {
      var ref = el("span");
      add(ref, el("span", "hint", "what an earlier call returned: "));
      add(ref, el("code", null, v.texts[0]));
      return ref;
    }
    if (v.kind === "omitted") return el("span", "hint", "left out");
    if (v.kind === "unwritable") return el("code", null, "too deeply nested to show: " + v.texts[0]);
    return el("span", "absent", "\u2014");
  }

  function raw(valueJson) {
    return el("pre", "json", JSON.stringify(valueJson, null, 2));
  }

  function noteRow(body, note) {
    var tr = add(body, el("tr", "note " + (note.accepted ? "accepted" : "rejected")));
    var td = add(tr, el("td"));
    td.colSpan = 3;
    td.textContent = (note.accepted ? "accepted" : "rejected") +
      (note.rule ? " by " + note.rule : "") + (note.path ? " at " + note.path : "") +
      ": " + note.message;
  }

  // What the spec says of an argument or a call (`calibration.page.spec_lines`), a line each.
  function specRow(body, lines) {
    if (!lines || !lines.length) return;
    var td = add(add(body, el("tr", "spec")), el("td"));
    td.colSpan = 3;
    add(td, el("span", "hint", "the spec: "));
    lines.forEach(function (line, i) {
      if (i) add(td, el("br"));
      add(td, el("code", null, line));
    });
  }

  // The plan beside the calls; `only` (row numbers), `offset` (subtracted from plan call
  // numbers) and `heading` cut it to one turn of a conversation.
  function layoutTable(layout, only, offset, heading) {
    var table = el("table", "calls");
    var head = add(add(table, el("thead")), el("tr"));
    add(head, el("th"));
    add(head, el("th", null, heading !== undefined ? heading : layout.plan === null ? "expected" :
      "expected (plan " + layout.plan + (layout.plan_count > 1 ?
        ", one of " + layout.plan_count + " acceptable plans" : "") + ")"));
    add(head, el("th", null, "produced (the agent)"));
    var rows = only ? only.map(function (k) { return layout.rows[k]; }) : layout.rows;
    rows.forEach(function (r) {
      var body = add(table, el("tbody", "call " + r.kind));
      var tr = add(body, el("tr", "name state-" + r.state));
      add(tr, el("th", null, (r.kind === "pair" ? "call" : r.kind + " call") +
        (r.state !== "same" ? " (" + r.state + ")" : "")));
      var left = add(tr, el("td"));
      if (r.expected_name !== null) {
        add(left, el("code", "tool", r.expected_name));
        add(left, el("span", "index", " plan call " + (r.plan_call - (offset || 0))));
      } else add(left, el("em", "hint", "not in the plan"));
      var right = add(tr, el("td"));
      if (r.produced_name !== null) {
        add(right, el("code", "tool", r.produced_name));
        add(right, el("span", "index", " call " + r.call));
      } else add(right, el("em", "hint", "not made"));
      specRow(body, r.spec);
      r.notes.forEach(function (n) { noteRow(body, n); });
      r.args.forEach(function (a) {
        var arg = add(body, el("tr", "arg state-" + a.state));
        arg.dataset.arg = a.key;
        add(add(arg, el("th")), el("code", null, a.key));
        add(arg, el("td")).appendChild(r.expected_name !== null ? value(a.expected) : el("span"));
        add(arg, el("td")).appendChild(
          r.unparsed ? el("span", "absent", "\u2014") :
          r.produced_name !== null ? value(a.produced) : el("span"));
        var tool = r.expected_name !== null ? r.expected_name : r.produced_name;
        specRow(body, a.spec !== null ? a.spec : (spec[tool] || {})[a.key]);
        a.notes.forEach(function (n) { noteRow(body, n); });
      });
      if (r.unparsed) {
        var bad = add(body, el("tr", "arg unparsed state-" + r.state));
        add(bad, el("th", null, "arguments"));
        add(bad, el("td"));
        var cell = add(bad, el("td"));
        add(cell, el("p", "problem", "not valid JSON" + (r.error ? ": " + r.error : "")));
        if (r.raw_args !== null) add(cell, el("pre", "json", r.raw_args));
      }
    });
    return table;
  }

  function section(parent, title) {
    var s = add(parent, el("section", "part"));
    add(s, el("h4", null, title));
    return s;
  }

  function stateBlock(parent, state, title) {
    // a state not judged (no goal_state, or a run without --env) is not called failed
    var judged = state.passed !== null && state.passed !== undefined;
    var s = section(parent, title || (judged ? "Final state" : "Required outputs"));
    var said = [];
    if (judged) {
      said.push("state " + (state.passed ? "passed" : "failed") +
        (state.goal ? " (goal: " + state.goal + ")" : ""));
    }
    if (state.outputs_passed !== null && state.outputs_passed !== undefined) {
      said.push("required outputs " + (state.outputs_passed ? "found" : "missing"));
    }
    add(s, el("p", null, said.join("; ")));
    if (state.error) add(s, el("p", "problem", state.error));
    (state.missing_outputs || []).forEach(function (m) {
      add(s, el("p", "problem", "missing in the response: " + m));
    });
    (state.checks || []).forEach(function (c) {
      var line = add(s, el("div", "check " + (c.passed ? "passed" : "failed")));
      add(line, el("span", "hint", "check " + (c.passed ? "passed " : "FAILED ")));
      add(line, el("code", null, c.name));
      if (c.reason) add(line, el("span", null, ": " + c.reason));
    });
    var tables = (state.diff && state.diff.tables) || {};
    Object.keys(tables).forEach(function (name) {
      var t = tables[name];
      add(s, el("h5", null, "table " + name + (t.note ? " (" + t.note + ")" : "")));
      ["added", "removed", "changed"].forEach(function (what) {
        (t[what] || []).forEach(function (item) {
          var line = add(s, el("div", "diff " + what));
          add(line, el("span", "hint", what + " "));
          add(line, raw(item));
        });
      });
    });
    documentChanges(s, state);
    if (state.calls && state.calls.length) {
      add(s, el("h5", null, "Replayed calls"));
      var list = add(s, el("ol", "replayed"));
      state.calls.forEach(function (call) {
        var li = add(list, el("li"));
        add(li, el("span", "index", "call " + call.call + " "));
        add(li, el("code", "tool", call.name));
        if ("error" in call) add(li, el("span", "problem", " error: " + call.error));
        else add(li, raw(call.result));
      });
    }
  }

  // A documents environment's diff: one line per changed JSON pointer; how replay ended.
  function documentChanges(s, state) {
    var diff = state.diff || {};
    (diff.changes || []).forEach(function (c) {
      var line = add(s, el("div", "diff " + c.kind));
      add(line, el("span", "hint", c.kind + " "));
      add(line, el("code", null, c.path));
      if ("goal" in c) { add(line, el("span", "hint", " goal")); add(line, raw(c.goal)); }
      if ("final" in c) { add(line, el("span", "hint", " final")); add(line, raw(c.final)); }
    });
    if (diff.unlisted) add(s, el("p", "hint", "... and " + diff.unlisted + " more changed paths"));
    if (state.terminal) {
      add(s, el("p", "hint", "replay ended at call " + state.terminal.call + " (" +
        state.terminal.name + "), a terminal tool: " + state.terminal.not_replayed +
        " later call(s) not replayed"));
    }
    (state.plan_errors || []).forEach(function (e) {
      add(s, el("p", "problem", "plan " + (state.plan || 0) + " call " + e.call + " (" + e.name +
        ") failed while building the goal: " + e.error));
    });
  }

  function open(index) {
    var c = cases[index];
    var box = $("case-detail");
    box.replaceChildren();
    box.hidden = false;
    var title = add(box, el("h3"));
    add(title, el("code", "case-id", c.id));
    add(title, document.createTextNode(" "));
    add(title, verdictCell(c.passed));
    var close = add(title, el("button", "close", "close"));
    close.type = "button";
    close.addEventListener("click", function () { box.hidden = true; });
    var b = c.baselines || {};
    add(box, el("p", null, c.kind + " case; exact JSON " + (b.exact ? "passes" : "fails") +
      ", lowercase " + (b.lowercase ? "passes" : "fails") +
      (b.nothing === undefined ? "" : ", doing nothing " + (b.nothing ? "passes" : "fails")) +
      (c.disagree.length ? " (disagrees with the rules: " + c.disagree.join(", ") + ")" : "")));
    if (c.tags && c.tags.length) add(box, el("p", "tags", "tags: " + c.tags.join(", ")));
    var pc = c.partial;
    if (pc) {
      add(box, el("p", "partial", "partial credit: f1 " + Number(pc.f1).toFixed(2) + ", " +
        Number(pc.matched) + " of " + Number(pc.expected) + " plan calls matched by " +
        Number(pc.produced) + " produced (precision " + Number(pc.precision).toFixed(2) +
        ", recall " + Number(pc.recall).toFixed(2) + ")"));
    }
    var ef = c.efficiency;
    if (ef) {
      add(box, el("p", "efficiency", "efficiency: " + Number(ef.extra) + " extra call(s), " +
        Number(ef.excused) + " excused by a relaxation, " + Number(ef.repeated) + " repeated"));
    }
    if (c.missing_output) add(box, el("p", "problem", "The outputs file has no line for this case."));
    if (c.slimmed) {
      add(box, el("p", "note", "This case is too large to show whole (" + c.slimmed +
        " bytes): its values are left out here; the report JSON has them."));
    }
    var layout = c.layout;
    if (layout) {
      if (layout.prompt !== null) {
        var p = section(box, "Prompt");
        add(p, el("div", "text", layout.prompt));
      }
      var cmp = section(box, "The plan beside the calls made");
      if (layout.no_call_expected) add(cmp, el("p", "expectation", "The plan is to make no call."));
      if (layout.reordered) add(cmp, el("p", "expectation", "The calls were made in another order than the plan's."));
      if (layout.tools && layout.tools.length) {
        var tools = add(cmp, el("ul", "spec-tools"));
        layout.tools.forEach(function (line) { add(tools, el("li", null, line)); });
      }
      if (c.turns && c.turns.length) turnBlocks(cmp, c, layout);
      else if (layout.rows.length) add(cmp, layoutTable(layout));
      layout.loose_notes.forEach(function (n) {
        add(cmp, el("p", "note " + (n.accepted ? "accepted" : "rejected"), n.message));
      });
      if (layout.exact_reason) add(cmp, el("p", "hint", "Exact JSON: " + layout.exact_reason));
      layout.other_plans.forEach(function (plan) {
        var o = section(box, "Plan " + plan.number + " (another acceptable plan)");
        if (!plan.calls.length) add(o, el("p", null, "make no call"));
        plan.calls.forEach(function (call, index) {
          add(o, el("span", "index", "plan call " + index + " "));
          add(o, el("code", "tool", call.name));
          var t = add(o, el("table", "args"));
          call.args.forEach(function (pair) {
            var tr = add(t, el("tr"));
            add(add(tr, el("th")), el("code", null, pair[0]));
            add(tr, el("td")).appendChild(value(pair[1]));
          });
        });
      });
    } else {
      add(box, el("p", "hint", "The plans and produced calls of this case are not in this report."));
      if (c.turns && c.turns.length) turnBlocks(box, c, null);
    }
    if (c.mismatches.length) mismatchList(section(box, "Mismatches"), c.mismatches);
    var extra = (c.notes || []).concat(c.unread || []);
    if (extra.length) {
      var n = section(box, "Notes");
      extra.forEach(function (t) { add(n, el("p", null, t)); });
    }
    (c.tool_errors || []).forEach(function (err) {
      var t = section(box, "Tool error of call " + err.call + " (" + err.name + ")");
      add(t, raw(err.result));
    });
    if (c.rubrics && c.rubrics.length) rubricBlock(box, c.rubrics);
    if (c.state) stateBlock(box, c.state);
    box.scrollIntoView({ block: "nearest" });
  }

  function mismatchList(parent, mismatches) {
      var list = add(parent, el("ul", "mismatches"));
      mismatches.forEach(function (x) {
        var li = add(list, el("li"));
        add(li, el("code", null, x.code));
        add(li, document.createTextNode(
          (x.call !== null && x.call !== undefined ? " call " + x.call :
            x.plan_call !== null && x.plan_call !== undefined ? " plan call " + x.plan_call : "") +
          (x.path ? " " + x.path : "") + (x.rule ? " [" + x.rule + "]" : "") + ": " + x.message));
        if ("expected" in x || "produced" in x) {
          var pair = add(li, el("div", "values"));
          if ("expected" in x) { var e = add(pair, el("div")); add(e, el("span", "hint", "expected")); add(e, raw(x.expected)); }
          if ("produced" in x) { var q = add(pair, el("div")); add(q, el("span", "hint", "produced")); add(q, raw(x.produced)); }
        }
      });
  }

  // A conversation turn by turn: each turn's verdict, chosen plan, calls range, its part of
  // the plan beside the calls, its mismatches and its state and checks when it has them.
  function turnBlocks(parent, c, layout) {
    var s = section(parent, "Turn by turn");
    c.turns.forEach(function (t) {
      var box = add(s, el("section", "turn " + (t.passed ? "passed" : "failed") + (t.first ? " first-failed" : "")));
      box.dataset.turn = String(t.index);
      var title = add(box, el("h5", null, "turn " + t.index + " "));
      add(title, verdictCell(t.passed));
      if (t.first) add(title, el("span", "badge first", "first failed turn"));
      var calls = t.calls || [0, 0];
      add(box, el("p", "hint", (t.plan === null || t.plan === undefined ? "no plan chosen" : "plan " + t.plan) +
        "; " + (calls[1] - calls[0] === 1 ? "call " + calls[0] :
        calls[1] > calls[0] ? "calls " + calls[0] + " to " + (calls[1] - 1) : "no call")));
      if (layout && t.rows) {
        if (t.rows.length) add(box, layoutTable(layout, t.rows, t.plan_offset,
          t.plan === null || t.plan === undefined ? "expected" : "expected (plan " + t.plan + ")"));
        else add(box, el("p", "expectation", "The plan is to make no call, and none was made."));
      }
      if (t.mismatches && t.mismatches.length) mismatchList(box, t.mismatches);
      if (t.state) stateBlock(box, t.state, "State after turn " + t.index);
      if (t.checks && t.checks.length) {
        var k = section(box, "Checks of turn " + t.index);
        t.checks.forEach(function (x) {
          var line = add(k, el("div", "check " + (x.passed ? "passed" : "failed")));
          add(line, el("span", "hint", "check " + (x.passed ? "passed " : "FAILED ")));
          add(line, el("code", null, x.name));
          if (x.reason) add(line, el("span", null, ": " + x.reason));
        });
      }
    });
    if (!layout) return;
    var inTurns = Object.create(null);
    c.turns.forEach(function (t) { (t.rows || []).forEach(function (k) { inTurns[k] = true; }); });
    var beyond = [];
    layout.rows.forEach(function (r, k) { if (!inTurns[k]) beyond.push(k); });
    if (beyond.length) {
      var after = add(s, el("section", "turn beyond"));
      var heading = add(after, el("h5", null, "calls beyond the case's last turn "));
      if (typeof c.first_failed_turn === "number" && c.first_failed_turn >= c.turns.length) {
        after.className += " failed first-failed";
        add(heading, el("span", "badge first", "first failed turn: " + c.first_failed_turn));
      }
      add(after, layoutTable(layout, beyond, 0, "expected"));
    }
  }

  Object.keys(filters).forEach(function (key) {
    filters[key].addEventListener(key === "search" ? "input" : "change", function () {
      shownCount = PAGE;
      refresh();
    });
  });
  $("filters").addEventListener("reset", function () {
    setTimeout(function () { shownCount = PAGE; refresh(); }, 0);
  });
  $("filters").addEventListener("submit", function (event) { event.preventDefault(); });
  $("more").addEventListener("click", function () { shownCount += PAGE; refresh(); });
  $("case-rows").addEventListener("click", function (event) {
    var tr = event.target.closest("tr");
    if (tr && tr.dataset.index !== undefined) open(Number(tr.dataset.index));
  });
  $("case-rows").addEventListener("keydown", function (event) {
    var tr = event.target.closest("tr");
    if (tr && event.key === "Enter") open(Number(tr.dataset.index));
  });
  refresh();
})();
