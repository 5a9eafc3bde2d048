// End-to-end check of the Flywheel web console in headless Debian Chromium, driven by playwright-core.
// Usage: node console-e2e.mjs BASE_URL OUT_DIR SPEC_JSON
//   SPEC_JSON: {"sim": episode id of a simulated episode, "failure": the failure episode id}
// Loads every page with one browser, clicks through, saves screenshots in OUT_DIR and prints one JSON
// object with what each page showed; the Java test asserts on it. Exit 1 on a browser or script error.
import { chromium } from 'playwright-core';
import { mkdtempSync, rmSync, mkdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const [base, outDir, specJson] = process.argv.slice(2);
const spec = JSON.parse(specJson);
mkdirSync(outDir, { recursive: true });
const profile = mkdtempSync(join(tmpdir(), 'flywheel-chromium-'));
const context = await chromium.launchPersistentContext(profile, {
  executablePath: process.env.CHROMIUM || '/usr/bin/chromium',
  headless: true,
  args: ['--headless', '--no-sandbox', '--disable-gpu', '--disable-background-networking', '--disable-component-update',
    '--disable-sync', '--no-first-run'],
  viewport: { width: 1400, height: 1000 },
});
const out = { errors: [] };
try {
  const page = context.pages()[0] || await context.newPage();
  page.setDefaultTimeout(30000);
  page.on('pageerror', e => out.errors.push('pageerror: ' + e.message));
  page.on('console', m => {
    if (m.type() === 'error' && !m.text().startsWith('Failed to load resource')) out.errors.push('console: ' + m.text());
  });
  out.http_errors = [];
  page.on('response', r => { if (r.status() >= 400) out.http_errors.push(r.status() + ' ' + new URL(r.url()).pathname + new URL(r.url()).search); });
  const ready = () => page.waitForSelector('body[data-ready="true"]');
  const text = sel => page.locator(sel).first().innerText();
  const shot = name => page.screenshot({ path: join(outDir, name), fullPage: true });

  // ---------------------------------------------------------------- episodes
  await page.goto(base + 'episodes');
  const episodes = out.episodes = {};
  episodes.total = Number(await text('#total'));
  episodes.rows = await page.locator('#episodes-table tbody tr').count();
  await shot('episodes.png');
  await page.click('a.sort[data-col="frame_count"]');
  await page.waitForURL(/sort=frame_count/);
  await page.click('a.sort[data-col="frame_count"]'); // second click: descending
  await page.waitForURL(/order=desc/);
  episodes.sorted_frames = await page.locator('#episodes-table tbody td.c-frame_count').allInnerTexts();
  await page.fill('input[name="scene"]', 'kitchen');
  await page.click('#apply');
  await page.waitForURL(/scene=kitchen/);
  episodes.kitchen_total = Number(await text('#total'));
  episodes.kitchen_scenes = await page.locator('#episodes-table tbody td.c-scene').allInnerTexts();
  await page.goto(base + 'episodes?limit=10');
  await page.click('.pager a.next >> nth=0');
  await page.waitForURL(/offset=10/);
  episodes.second_page_range = await text('#range');

  // ---------------------------------------------------------------- one episode
  await page.goto(base + 'episodes?q=' + encodeURIComponent(spec.sim));
  await page.click(`#episodes-table a[href="/episodes/${spec.sim}"]`);
  await page.waitForURL(new RegExp('/episodes/' + spec.sim + '$'));
  await ready();
  const ep = out.episode = {};
  ep.id = await text('#episode-id');
  ep.cameras = await page.locator('#camera-picker button').count();
  ep.strip = await page.locator('#strip img').count();
  await page.waitForFunction(() => [...document.querySelectorAll('#strip img')].every(i => i.complete && i.naturalWidth > 0));
  await page.waitForFunction(() => document.getElementById('frame-image').complete
      && document.getElementById('frame-image').naturalWidth > 0);
  ep.image_width = await page.evaluate(() => document.getElementById('frame-image').naturalWidth);
  ep.ticks = await page.locator('#timeline line.tick, #timeline line.flagged').count();
  ep.plots = await page.locator('#plots svg').count();
  ep.state_series = await page.locator('#plot-state polyline').count();
  ep.qc_rows = await page.locator('#qc-table tbody tr').count();
  ep.residual_rows = await page.locator('#residuals-table tbody tr').count();
  ep.enrichment = await text('#enrichment');
  await page.locator('#strip img').nth(2).click();
  ep.after_strip_click = await text('#frame-index');
  await page.locator('#scrubber').fill('7');
  ep.after_scrub = await text('#frame-index');
  await page.locator('#camera-picker button').nth(1).click();
  await page.waitForFunction(() => document.getElementById('frame-image').src.includes('camera=1'));
  ep.camera_after_pick = await page.evaluate(() => new URL(document.getElementById('frame-image').src).searchParams.get('camera'));
  await shot('episode.png');

  // ---------------------------------------------------------------- alignment
  await page.click('#align-link');
  await page.waitForURL(/\/align$/);
  await ready();
  const al = out.align = {};
  al.master = await text('#master-topic');
  al.streams = await page.locator('#stream option').allInnerTexts();
  const computed = async () => Number(await page.evaluate(() => document.body.dataset.computed || 0));
  const recompute = async action => {
    const before = await computed();
    await action();
    await page.waitForFunction(b => Number(document.body.dataset.computed || 0) > b
        && !document.getElementById('align-summary').textContent.startsWith('recomputing'), before);
  };
  await recompute(() => page.selectOption('#stream', '/teleop/command'));
  await recompute(async () => { await page.fill('#tolerance', '1'); await page.dispatchEvent('#tolerance', 'change'); });
  al.narrow_summary = await text('#align-summary');
  al.narrow_frames = await page.locator('#align-svg circle.frame').count();
  al.narrow_misses = await page.locator('#align-svg circle.miss').count();
  al.narrow_pairs = await page.locator('#align-svg line.pair').count();
  await shot('align-narrow.png');
  await recompute(async () => { await page.fill('#tolerance', '50'); await page.dispatchEvent('#tolerance', 'change'); });
  al.wide_summary = await text('#align-summary');
  al.wide_misses = await page.locator('#align-svg circle.miss').count();
  al.wide_pairs = await page.locator('#align-svg line.pair').count();
  await shot('align.png');
  await recompute(async () => { await page.fill('#tolerance', '-3'); await page.dispatchEvent('#tolerance', 'change'); });
  al.bad_summary = await text('#align-summary');

  // ---------------------------------------------------------------- embedding map
  await page.goto(base + 'map');
  await ready();
  const mp = out.map = {};
  mp.status = await text('#map-status');
  mp.points = await page.locator('#map g.point').count();
  mp.failures = await page.locator('#map path.failure').count();
  mp.mined = await page.locator('#map circle.mined').count();
  mp.legend_scenes = await page.locator('#map-legend .legend-scene').count();
  await shot('map.png');
  await page.locator(`#map g.point[data-episode="${spec.failure}"] circle`).first().click({ force: true });
  await page.waitForURL(new RegExp('/episodes/' + spec.failure + '$'));
  mp.clicked_opened = await text('#episode-id');

  // ---------------------------------------------------------------- training sets
  await page.goto(base + 'trainsets');
  await ready();
  const ts = out.trainsets = {};
  ts.rows = await page.locator('#trainsets-table tbody tr').count();
  ts.composition_of = await text('#comp-tag');
  ts.composition_bars = await page.locator('#composition rect.bar').count();
  ts.diff_summary = await text('#diff-summary');
  ts.diff_bars = await page.locator('#diff-chart rect.bar').count();
  ts.added = await page.locator('#diff-added li').allInnerTexts();
  ts.removed = await page.locator('#diff-removed li').count();
  await shot('trainsets.png');
  await page.click('a.tag[data-tag="train-v1"]');
  await page.waitForFunction(() => document.getElementById('comp-tag').textContent === 'train-v1');
  ts.composition_after_click = await text('#comp-tag');

  // ---------------------------------------------------------------- fleet
  await page.click('nav a[href="/fleet"]');
  await page.waitForURL(/\/fleet$/);
  await ready();
  const fl = out.fleet = {};
  fl.nav_on = await text('nav a.on');
  fl.robots = await page.locator('#robots-table tbody tr').allInnerTexts();
  fl.summary_robots = await text('#n-robots');
  await shot('fleet.png');

  // ---------------------------------------------------------------- an error page
  const resp = await page.goto(base + 'episodes/rec-0000000000000000-e00');
  out.missing = { status: resp.status(), message: await text('#error') };
} catch (e) {
  out.errors.push('script: ' + (e.stack || e.message));
} finally {
  await context.close();
  rmSync(profile, { recursive: true, force: true });
}
console.log(JSON.stringify(out));
process.exit(out.errors.some(e => e.startsWith('script:')) ? 1 : 0);
