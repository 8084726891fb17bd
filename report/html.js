/* html.js — draws the charts of a kvio-report --html page with Chart.js.
 * Embedded into the page by report/html.c after Chart.js itself. Reads the
 * chart specs from the JSON in #kvio-data (written by html.c from the
 * sql/html_*.sql rows), draws one Chart per spec into its card, and writes a
 * machine-readable summary into #kvio-summary: each chart's id, axis types,
 * datasets with their point counts, its note, every error caught while
 * drawing, and the time taken (the tests and make bench read it from
 * chromium --dump-dom). */
(function () {
	'use strict';
	var t0 = performance.now();
	var errors = [];
	var summary = {charts: [], errors: errors};
	window.addEventListener('error', function (e) { errors.push('error: ' + e.message); });
	document.addEventListener('securitypolicyviolation', function (e) {
		errors.push('csp: ' + e.violatedDirective + ' ' + e.blockedURI);
	});
	['error', 'warn'].forEach(function (level) {
		var orig = console[level];
		console[level] = function () {
			errors.push('console.' + level + ': ' + Array.prototype.join.call(arguments, ' '));
			return orig.apply(console, arguments);
		};
	});

	/* one colour per arm, in label order; roles vary the line */
	var PALETTE = ['#1f77b4', '#ff7f0e', '#2ca02c', '#9467bd', '#8c564b', '#e377c2', '#17becf', '#7f7f7f'];
	var ROLE_DASH = {'max': [4, 3], 'device window': [6, 3], 'service time p25': [2, 2], 'zero': [2, 2]};

	function fmt(v) {
		if (v === 0) return '0';
		var a = Math.abs(v);
		if (a >= 1e6 || a < 1e-3) return v.toExponential(3);
		return String(Math.round(v * 1000) / 1000);
	}

	function dataset(spec, s) {
		var color = s.role === 'zero' ? '#555555' : PALETTE[s.color % PALETTE.length];
		var pts = [];
		for (var i = 0; i + 1 < s.xy.length; i += 2)
			pts.push({x: s.xy[i] * spec.x.scale, y: s.xy[i + 1] * spec.y.scale});
		var d = {
			label: s.name, data: pts, borderColor: s.role === 'max' ? color + '88' : color,
			backgroundColor: color + (spec.type === 'bar' ? '99' : 'cc'),
			borderWidth: s.role === 'max' ? 1 : 2, pointRadius: 0, pointHitRadius: 4,
			borderDash: ROLE_DASH[s.role] || [], fill: false, stepped: false, showLine: true
		};
		if (spec.type === 'step' && !s.marker) d.stepped = 'middle';
		if (spec.type === 'scatter') { d.showLine = false; d.pointRadius = 1.5; }
		if (spec.type === 'bar' && !s.marker) {
			/* overlaid on a linear axis (bars touch: see both through the fill); side by side,
			   6 px each, on a log axis, where the same size in two arms would hide one */
			d.type = 'bar'; d.grouped = !!spec.x.log; d.borderWidth = 1;
			if (spec.x.log) d.barThickness = 6;
		} else if (spec.type === 'bar') {
			d.type = 'line';
		}
		return d;
	}

	function axisType(spec, axis, datasets) {
		if (!spec[axis].log) return 'linear';
		for (var i = 0; i < datasets.length; i++)
			for (var j = 0; j < datasets[i].data.length; j++)
				if (datasets[i].data[j][axis] > 0) return 'logarithmic';
		return 'linear';
	}

	/* the decade below the smallest positive value: bars of the smallest count stay visible */
	function logMin(axis, datasets) {
		var m = Infinity;
		datasets.forEach(function (d) {
			d.data.forEach(function (p) { if (p[axis] > 0 && p[axis] < m) m = p[axis]; });
		});
		return Math.pow(10, Math.floor(Math.log10(m * 0.999)));
	}

	/* log axis labels at 1, 2 and 5 of each decade, written short (0.001, not 0.0010) */
	function logTick(v) {
		var m = v / Math.pow(10, Math.floor(Math.log10(v)));
		m = Math.round(m * 1000) / 1000;
		if (m !== 1 && m !== 2 && m !== 5) return '';
		return v >= 1e6 || v < 1e-3 ? v.toExponential(0) : fmt(v);
	}

	function options(spec, datasets) {
		var xt = axisType(spec, 'x', datasets), yt = axisType(spec, 'y', datasets);
		/* a log axis cannot show 0 or less: such points are not drawn (an axis with none above 0 is linear) */
		var o = {
			animation: false, responsive: true, maintainAspectRatio: false, parsing: false, normalized: true,
			interaction: {mode: 'nearest', intersect: false},
			scales: {
				x: {type: xt, title: {display: true, text: spec.x.label}},
				y: {type: yt, title: {display: true, text: spec.y.label}, beginAtZero: yt === 'linear' && spec.y.zero}
			},
			plugins: {
				title: {display: true, text: spec.title, font: {size: 14}},
				legend: {display: true, position: 'bottom'},
				tooltip: {callbacks: {label: function (c) {
					return c.dataset.label + ': ' + fmt(c.parsed.x) + ' ' + spec.x.unit + ', ' +
						fmt(c.parsed.y) + ' ' + spec.y.unit;
				}}}
			}
		};
		if (spec.type === 'bar' && yt === 'logarithmic') o.scales.y.min = logMin('y', datasets);
		if (xt === 'logarithmic') o.scales.x.ticks = {callback: logTick};
		if (yt === 'logarithmic') o.scales.y.ticks = {callback: logTick};
		return o;
	}

	function draw(spec) {
		var card = document.getElementById('chart-' + spec.id);
		var t = performance.now();
		var entry = {id: spec.id, title: spec.title, canvas: false, datasets: [], note: spec.note || ''};
		summary.charts.push(entry);
		if (!card) { errors.push('no card for chart ' + spec.id); return; }
		if (!spec.series.length) return;
		var datasets = spec.series.map(function (s) { return dataset(spec, s); });
		var canvas = document.createElement('canvas');
		var box = document.createElement('div');
		box.className = 'plot';
		box.appendChild(canvas);
		card.insertBefore(box, card.firstChild);
		var ch = new Chart(canvas, {type: spec.type === 'bar' ? 'bar' : 'line', data: {datasets: datasets},
			options: options(spec, datasets)});
		entry.canvas = canvas.width > 0 && canvas.height > 0;
		entry.x = ch.scales.x.type;
		entry.y = ch.scales.y.type;
		ch.data.datasets.forEach(function (d) { entry.datasets.push({label: d.label, points: d.data.length}); });
		entry.ms = Math.round(performance.now() - t);
	}

	try {
		var data = JSON.parse(document.getElementById('kvio-data').textContent);
		Chart.defaults.font.family = 'system-ui, sans-serif';
		data.charts.forEach(function (spec) {
			try { draw(spec); } catch (e) { errors.push('chart ' + spec.id + ': ' + e); }
		});
	} catch (e) {
		errors.push('page: ' + e);
	}
	summary.draw_ms = Math.round(performance.now() - t0); /* html.js alone: parse the data, draw every chart */
	summary.page_ms = Math.round(performance.now());      /* since navigation: parse the page, Chart.js, draw */
	document.getElementById('kvio-summary').textContent = JSON.stringify(summary);
})();
