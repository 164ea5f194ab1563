(function () {
  var nest = document.querySelector('#nest .body'), code = document.querySelector('#cpp .body');
  function all(sel) { return Array.prototype.slice.call(document.querySelectorAll(sel)); }
  function clear() {
    all('.hl').forEach(function (e) { e.classList.remove('hl'); });
    all('.hd.sel').forEach(function (e) { e.classList.remove('sel'); });
  }
  function center(box, el) {  // scroll box so that el is a third of the way down
    box.scrollTop += el.getBoundingClientRect().top - box.getBoundingClientRect().top - box.clientHeight / 3;
  }
  // Nest: a long line opens; the triangle (or a header without C++) folds;
  // a loop or produce header shows its C++ line.
  nest.addEventListener('click', function (ev) {
    var ln = ev.target.closest('.ln.long');
    if (ln) { ln.classList.toggle('open'); return; }
    var hd = ev.target.closest('.hd');
    if (!hd) return;
    if (ev.target.classList.contains('tog') || !hd.dataset.cpp) { hd.parentNode.classList.toggle('closed'); return; }
    var line = document.getElementById('cpp-' + hd.dataset.cpp);
    clear();
    hd.classList.add('sel');
    line.classList.add('hl');
    center(code, line);
  });
  // C++: a linked line opens and shows its block in the nest; a long one opens.
  code.addEventListener('click', function (ev) {
    var cl = ev.target.closest('.cl');
    if (!cl) return;
    if (!cl.dataset.n) { if (cl.classList.contains('long')) cl.classList.toggle('open'); return; }
    var blk = document.getElementById(cl.dataset.n), hd = blk.firstChild;
    for (var p = blk; p !== nest; p = p.parentNode) p.classList.remove('closed');
    clear();
    cl.classList.add('hl');
    hd.classList.add('sel');
    center(nest, hd);
    hd.classList.remove('flash');
    void hd.offsetWidth;  // restart the animation
    hd.classList.add('flash');
  });
  document.getElementById('expand').onclick = function () {
    all('.blk').forEach(function (b) { b.classList.remove('closed'); });
  };
  document.getElementById('collapse').onclick = function () {
    all('.blk').forEach(function (b) { b.classList.add('closed'); });
  };
  document.getElementById('lets').onchange = function (ev) {
    document.body.classList.toggle('nolets', !ev.target.checked);
  };
})();
