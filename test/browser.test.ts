/**
 * The import page in a real headless Chromium (Debian's package, driven by playwright-core)
 * against the real service on loopback. Without /usr/bin/chromium the tests report
 * themselves skipped.
 */
import { after, before, describe, test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { chromium, type Browser, type Page, type Request } from 'playwright-core';
import { PLACES_DIR, REPO_ROOT, TEST_FILES_DIR } from './support/paths.js';
import { mkdirSync } from 'node:fs';

/** Screenshots kept after a run (git-ignored). */
function artefact(name: string): string {
  const dir = join(REPO_ROOT, 'test-artifacts');
  mkdirSync(dir, { recursive: true });
  return join(dir, name);
}
import { startTestService, tokenFor, type TestService } from './support/server.js';

const CHROMIUM = '/usr/bin/chromium';
const WITH_SCRIPTS = join(PLACES_DIR, 'rocket-arena-2006.rbxl'); // 15 scripts
const NO_SCRIPTS = join(TEST_FILES_DIR, 'baseplate-413.rbxl');
const NOT_A_PLACE = join(TEST_FILES_DIR, 'README.md');

describe('import page', () => {
  let service: TestService | undefined;
  let browser: Browser | undefined;

  before(async () => {
    if (!existsSync(CHROMIUM)) return;
    service = await startTestService();
    browser = await chromium.launch({
      executablePath: CHROMIUM,
      args: [
        '--headless',
        '--no-sandbox',
        '--disable-gpu',
        '--disable-quic',
        '--no-first-run',
        '--disable-background-networking',
        '--disable-component-update',
        '--disable-sync',
      ],
    });
  });

  after(async () => {
    await browser?.close();
    await service?.close();
  });

  interface Session {
    page: Page;
    /** Requests the page made (every one must stay on the service). */
    requests: Request[];
    /** Uncaught errors and console errors in the page. */
    errors: string[];
  }

  /** A fresh page on the import page; anything not bound for the service is refused and recorded. */
  async function open(t: TestContext): Promise<Session | null> {
    if (!browser || !service) {
      t.skip('chromium not installed');
      return null;
    }
    const context = await browser.newContext();
    t.after(() => context.close());
    const page = await context.newPage();
    const requests: Request[] = [];
    const errors: string[] = [];
    const origin = new URL(service.url).origin;
    await page.route('**/*', (route) =>
      new URL(route.request().url()).origin === origin ? route.continue() : route.abort('blockedbyclient'),
    );
    page.on('request', (request) => requests.push(request));
    page.on('pageerror', (error) => errors.push(error.message));
    page.on('console', (message) => {
      // The editor route does not exist on this service: its 404 is expected after the redirect.
      if (message.type() === 'error' && !page.url().includes('/editor/')) errors.push(message.text());
    });
    await page.goto(`${service.url}/api-rbxl/`);
    return { page, requests, errors };
  }

  async function analyse(page: Page, file: string): Promise<void> {
    await page.setInputFiles('#file', file);
    await page.click('#analyze');
    await page.waitForSelector('#report:not([hidden]), #error:not([hidden])');
  }

  async function projectFor(url: string, userId: string): Promise<{ title: string; scripts: unknown[] }> {
    const projectId = decodeURIComponent(new URL(url).pathname.split('/').at(-1)!);
    const response = await fetch(`${service!.url}/api-rbxl/projects/${encodeURIComponent(projectId)}`, {
      headers: { 'X-User-Id': userId },
    });
    assert.equal(response.status, 200);
    return (await response.json()) as { title: string; scripts: unknown[] };
  }

  async function waitForViewer(page: Page): Promise<{ ready: boolean; nodes: number; error?: string }> {
    await page.waitForFunction(() => (window as unknown as { rbxlViewer?: unknown }).rbxlViewer !== undefined, undefined, { timeout: 120_000 });
    return page.evaluate(() => (window as unknown as { rbxlViewer: { ready: boolean; nodes: number; error?: string } }).rbxlViewer);
  }

  /** The view's canvas holds a drawing: many colours, not one flat fill. */
  async function assertCanvasDrawn(page: Page): Promise<void> {
    const colours = await page.evaluate(() => {
      const canvas = document.getElementById('viewer') as HTMLCanvasElement;
      const copy = document.createElement('canvas');
      copy.width = 160; copy.height = 90;
      const context = copy.getContext('2d')!;
      context.drawImage(canvas, 0, 0, 160, 90);
      const data = context.getImageData(0, 0, 160, 90).data;
      const seen = new Set<number>();
      let background = 0;
      for (let i = 0; i < data.length; i += 4) {
        seen.add((data[i]! >> 3) << 10 | (data[i + 1]! >> 3) << 5 | (data[i + 2]! >> 3));
        if (Math.abs(data[i]! - 0xb9) < 6 && Math.abs(data[i + 1]! - 0xd4) < 6 && Math.abs(data[i + 2]! - 0xee) < 6) background++;
      }
      return { colours: seen.size, background: background / (data.length / 4) };
    });
    assert.ok(colours.colours > 20, `the view has ${colours.colours} colours`);
    assert.ok(colours.background < 0.9, `the view is ${Math.round(colours.background * 100)}% background`);
  }

  function assertStayedOnService(session: Session): void {
    const origin = new URL(service!.url).origin;
    const elsewhere = session.requests.map((request) => request.url()).filter((url) => new URL(url).origin !== origin);
    assert.deepEqual(elsewhere, [], 'the page makes no external requests');
    assert.deepEqual(session.errors, []);
  }

  test('a place with scripts: the token is kept, the report shown, the mode chosen, and the redirect followed', async (t) => {
    const session = await open(t);
    if (!session) return;
    const { page } = session;
    const token = tokenFor({ id: 701 });

    await page.fill('#token', token);
    await page.reload();
    assert.equal(await page.inputValue('#token'), token, 'the token survives a reload');
    assert.match(await page.textContent('#token-hint') ?? '', /user 701/);

    await analyse(page, WITH_SCRIPTS);
    assert.equal(await page.isVisible('#error'), false, (await page.textContent('#error')) ?? '');
    assert.equal(await page.textContent('#count-scripts'), '15');
    assert.ok(await page.isVisible('#count-instances'));
    assert.ok(await page.isVisible('#count-parts'));
    assert.ok(await page.isVisible('#scripts-by-class'));
    assert.ok(await page.isVisible('#script-mode'), 'scripts_total > 0: the choice is offered');
    assert.ok(await page.isChecked('#mode-disabled'), 'disabled is preselected');

    const analyze = session.requests.find((request) => request.url().endsWith('/api-rbxl/import/rbxl/analyze'));
    assert.ok(analyze);
    assert.equal(analyze.resourceType(), 'xhr', 'uploads go through XMLHttpRequest for progress');
    const headers = await analyze.allHeaders();
    assert.equal(headers['authorization'], token);
    assert.equal(headers['x-auth-override'], '701');

    // The analysis's picture beside the report, fetched with the user's credentials.
    await page.waitForSelector('#picture:not([hidden])');
    assert.equal(await page.evaluate(() => (document.getElementById('picture-image') as HTMLImageElement).naturalWidth), 1024);

    await page.check('#mode-skip');
    await page.fill('#title', 'Browser arena');
    await page.click('#create');
    // After create: the project's scene.glb in the 3D view, then on to the project.
    const viewer = await waitForViewer(page);
    assert.equal(viewer.ready, true, viewer.error);
    const projectId = (await page.getAttribute('#project-open', 'href'))!.split('/').at(-1)!;
    const glb = await fetch(`${service!.url}/api-rbxl/projects/${projectId}/scene.glb`, { headers: { 'X-User-Id': '701' } });
    const bytes = new Uint8Array(await glb.arrayBuffer());
    const json = JSON.parse(Buffer.from(bytes.subarray(20, 20 + new DataView(bytes.buffer).getUint32(12, true))).toString('utf8')) as { nodes: unknown[] };
    assert.equal(viewer.nodes, json.nodes.length, 'every node of scene.glb is in the viewer\'s scene');
    assert.equal(json.nodes.length, 1790, 'the arena\'s 1,790 parts');
    await assertCanvasDrawn(page);
    await page.locator('#viewer').screenshot({ path: artefact('viewer-rocket-arena.png') });
    await page.locator('#picture').screenshot({ path: artefact('picture-rocket-arena.png') });
    await Promise.all([page.waitForURL(`${service!.url}/editor/**`), page.click('#project-open')]);

    const project = await projectFor(page.url(), '701');
    assert.equal(project.title, 'Browser arena');
    assert.deepEqual(project.scripts, [], 'skip imports no scripts');
    assertStayedOnService(session);
  });

  test('a place without scripts: no mode choice, created with the default', async (t) => {
    const session = await open(t);
    if (!session) return;
    const { page } = session;
    await page.fill('#token', tokenFor({ id: '702' }));

    await analyse(page, NO_SCRIPTS);
    assert.equal(await page.isVisible('#error'), false, (await page.textContent('#error')) ?? '');
    assert.equal(await page.textContent('#count-scripts'), '0');
    assert.ok(await page.isVisible('#create'));
    assert.equal(await page.isVisible('#script-mode'), false, 'scripts_total = 0: no choice');

    await page.click('#create');
    assert.equal((await waitForViewer(page)).ready, true);
    await Promise.all([page.waitForURL(`${service!.url}/editor/**`), page.click('#project-open')]);
    const project = await projectFor(page.url(), '702');
    assert.equal(project.title, 'baseplate-413');
    assert.deepEqual(project.scripts, []);
    assertStayedOnService(session);
  });

  test('errors show the client message', async (t) => {
    const session = await open(t);
    if (!session) return;
    const { page } = session;

    await page.fill('#token', tokenFor({ id: 703 }));
    await analyse(page, NOT_A_PLACE);
    assert.match((await page.textContent('#error')) ?? '', /^analyze failed \(422\): \{.*"error"/);
    assert.equal(await page.isVisible('#report'), false);
    assert.equal(await page.isVisible('#create-form'), false);

    await page.fill('#token', '');
    await analyse(page, WITH_SCRIPTS);
    assert.match((await page.textContent('#error')) ?? '', /^analyze failed \(401\): /);
    assert.equal(page.url(), `${service!.url}/api-rbxl/`);
  });
});
