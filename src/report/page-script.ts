/**
 * The page's one script: it reads the windows' data block (see `window-data.ts`) and shows a window's counts,
 * requests and error when a cell is hovered, and keeps them below the calendar when it is clicked. Every text
 * goes in through `textContent`, never as markup. Plain ES2017, no library: the page works offline.
 */
export const PAGE_SCRIPT = `
(function () {
  'use strict';
  var block = document.getElementById('report-data');
  if (!block) return;
  var data = JSON.parse(block.textContent);
  var STATUS = { d: 'done', f: 'failed', p: 'pending', m: 'never loaded' };
  var tip = document.createElement('div');
  tip.className = 'tip';
  tip.hidden = true;
  document.body.appendChild(tip);

  function addDays(day, n) {
    var d = new Date(day + 'T00:00:00Z');
    d.setUTCDate(d.getUTCDate() + n);
    return d.toISOString().slice(0, 10);
  }
  function count(n) { return Number(n).toLocaleString('en-US'); }

  /** The lines describing window i of stream s: [label, text] pairs, the error last. */
  function describe(s, i) {
    var start = addDays(s.base, s.o[i]);
    var end = addDays(start, s.n[i] - 1);
    var lines = [[s.stream, start === end ? start : start + ' .. ' + end], ['status', STATUS[s.s.charAt(i)] || '?']];
    if (s.s.charAt(i) !== 'm') {
      var share = s.x[i] > 0 ? ' (' + (100 * s.r[i] / s.x[i]).toFixed(1) + '%)' : '';
      lines.push(['records', count(s.x[i]) + ' read, ' + count(s.l[i]) + ' loaded, ' + count(s.r[i]) + ' rejected' + share]);
      lines.push(['requests', count(s.q[i])]);
      if (s.t[i]) lines.push(['finished', s.t[i] + ' UTC']);
      if (s.u[i] >= 0) lines.push(['run', data.runs[s.u[i]]]);
    }
    if (s.e[i] >= 0) lines.push(['error', data.errors[s.e[i]]]);
    return lines;
  }

  function fill(target, lines, limit) {
    target.textContent = '';
    lines.forEach(function (line) {
      var row = document.createElement('div');
      var label = document.createElement('b');
      label.textContent = line[0] + ': ';
      row.appendChild(label);
      var text = String(line[1]);
      row.appendChild(document.createTextNode(limit && text.length > limit ? text.slice(0, limit) + '…' : text));
      target.appendChild(row);
    });
  }

  data.streams.forEach(function (s) {
    var svg = Array.prototype.find.call(document.querySelectorAll('svg.cal'), function (el) { return el.getAttribute('data-stream') === s.stream; });
    if (!svg) return;
    var group = svg.querySelector('g.cells');
    var detail = svg.parentNode.querySelector('.detail');
    var index = new Map();
    Array.prototype.forEach.call(group.children, function (cell, i) { index.set(cell, i); });
    var selected = null;
    group.addEventListener('mouseover', function (event) {
      var i = index.get(event.target);
      if (i === undefined) return;
      fill(tip, describe(s, i), 300);
      tip.hidden = false;
    });
    group.addEventListener('mousemove', function (event) {
      var x = Math.min(event.clientX + 14, window.innerWidth - tip.offsetWidth - 8);
      tip.style.left = Math.max(4, x) + 'px';
      tip.style.top = (event.clientY + 16) + 'px';
    });
    group.addEventListener('mouseout', function () { tip.hidden = true; });
    group.addEventListener('click', function (event) {
      var i = index.get(event.target);
      if (i === undefined || !detail) return;
      if (selected) selected.classList.remove('sel');
      selected = event.target;
      selected.classList.add('sel');
      fill(detail, describe(s, i), 0);
    });
  });
})();
`;
