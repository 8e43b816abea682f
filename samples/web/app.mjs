// The sample page: the Iris classifier (samples/models/iris) as a graft descriptor, run in the
// browser on the measurements the sliders give. samples/web/serve.sh converts the model and serves
// this folder with graft's runtime under /graft/, the descriptor under /models/iris/ and the
// sample's folder (its labels) under /sample/. With ?selftest the page classifies each flower
// of the list and reports to the test server (web/test/run_browser_tests.py --mode sample).
import * as graft from '/graft/graft.mjs';

const FEATURES = [
  ['sepal length', 4.0, 8.0], ['sepal width', 2.0, 4.5], ['petal length', 1.0, 7.0], ['petal width', 0.1, 2.6],
];
// Flowers from Fisher's Iris data (the sample model never saw these six in training).
const FLOWERS = {
  'a setosa': [5.0, 3.6, 1.4, 0.2], 'another setosa': [4.9, 3.1, 1.5, 0.1],
  'a versicolor': [6.5, 2.8, 4.6, 1.5], 'another versicolor': [5.2, 2.7, 3.9, 1.4],
  'a virginica': [6.5, 3.0, 5.8, 2.2], 'another virginica': [7.2, 3.6, 6.1, 2.5],
};

const $ = (id) => document.getElementById(id);
const form = $('measures');
const sliders = FEATURES.map(([name, lo, hi], i) => {
  const label = Object.assign(document.createElement('label'), { textContent: name + ' (cm)', htmlFor: 'f' + i });
  const input = Object.assign(document.createElement('input'), { type: 'range', id: 'f' + i, min: lo, max: hi, step: 0.1 });
  const value = document.createElement('output');
  form.append(label, input, value);
  return { input, value };
});

function setFlower(values) {
  values.forEach((v, i) => { sliders[i].input.value = v; });
  classify();
}

for (const [name, values] of Object.entries(FLOWERS)) {
  const b = Object.assign(document.createElement('button'), { textContent: name, type: 'button' });
  b.onclick = () => setFlower(values);
  $('flowers').append(b);
}

sliders.forEach((s, i) => { s.input.value = FLOWERS['a versicolor'][i]; s.value.textContent = s.input.value; });

const labels = (await (await fetch('/sample/labels.txt')).text()).trim().split('\n');
let model;
try {
  model = await graft.load('/models/iris/', {
    onProgress: ({ loaded, total }) => { $('status').textContent = `weights: ${loaded} of ${total} bytes`; },
  });
} catch (e) {
  $('verdict').textContent = `graft could not load the model: ${e.message}`;
  throw e;
}
const info = await graft.buildInfo();
$('status').textContent = `graft ${info.version}, ${model.backend} build, ${model.threads} thread(s)` +
  (graft.threadsAvailable() ? '' : ' (serve the page with COOP/COEP for threads)');

let pending = false;
async function classify() {
  sliders.forEach((s) => { s.value.textContent = Number(s.input.value).toFixed(1); });
  if (pending) return;
  pending = true;
  try {
    const x = new Float32Array(sliders.map((s) => Number(s.input.value)));
    const out = await model.run({ [model.inputs[0].name]: x });
    const p = out[model.outputs[0].name].data;
    const best = p.indexOf(Math.max(...p));
    $('result').tBodies[0].replaceChildren(...labels.map((name, i) => {
      const row = document.createElement('tr');
      row.innerHTML = `<td>${name}</td><td class="bar"><div style="width:${(100 * p[i]).toFixed(1)}%"></div></td>` +
        `<td>${(100 * p[i]).toFixed(1)}%</td>`;
      return row;
    }));
    $('verdict').textContent = `It is Iris ${labels[best]} (p = ${p[best].toFixed(3)}).`;
    document.body.dataset.prediction = labels[best];
  } finally {
    pending = false;
  }
}

form.oninput = classify;
if (new URLSearchParams(location.search).has('selftest')) {
  const lines = [];
  for (const [name, values] of Object.entries(FLOWERS)) {
    setFlower(values);
    await new Promise((resolve) => setTimeout(resolve, 0));
    while (pending) await new Promise((resolve) => setTimeout(resolve, 10));
    const said = document.body.dataset.prediction;
    lines.push(`${name}: the page says ${said} ("${$('verdict').textContent}")`);
    if (!name.endsWith(said)) lines.push(`FAIL ${name} was classified as ${said}`);
  }
  lines.push($('status').textContent);
  const ok = !lines.some((l) => l.startsWith('FAIL'));
  await fetch('/__result', { method: 'POST', body: JSON.stringify({ ok, lines }) });
} else {
  setFlower(FLOWERS['a versicolor']);
}
