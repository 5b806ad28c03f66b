#!/usr/bin/env node
// Opens Neo4j Browser in Debian's headless Chromium (driven by playwright-core), connects to a
// Neo4j server, applies kgrag's Browser style sheet, draws one kgrag answer's trace with
//   :param id => '<query id>'
//   MATCH p=(:Query {id: $id})-[*..3]->() RETURN p
// and checks what Browser drew: the labels of its result overview and the nodes of its graph
// (SVG), whose fill colour names the label (the style sheet gives each label its own colour) and
// whose caption is the property the style sheet chose. Saves a screenshot of the result frame and
// writes the findings as JSON. Exits 0 when every check passed, 1 when one failed (each failure
// is printed on its own line), 2 on a usage error.
//
//   node check.mjs --query-id q_... [--browser-url http://127.0.0.1:7474/browser/]
//     [--bolt neo4j://127.0.0.1:7687] [--user neo4j] (password: $KGRAG_NEO4J_PASSWORD, or
//     --password) [--style ../../docs/kgrag.grass] [--screenshot trace.png] [--json out.json]
//     [--chromium /usr/bin/chromium] [--timeout-s 90] [--expect-step-types a,b,c]
//
// Nothing but the Browser server is contacted: every other request Browser makes (usage
// statistics, remote guides) is aborted.

import { chromium } from 'playwright-core'
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs'
import { tmpdir } from 'node:os'
import { dirname, join, resolve } from 'node:path'
import { fileURLToPath } from 'node:url'
import { parseArgs } from 'node:util'

const HERE = dirname(fileURLToPath(import.meta.url))
export const TRACE_CYPHER = 'MATCH p=(:Query {id: $id})-[*..3]->() RETURN p'
/** The labels a trace must show; Browser must draw at least one node of each. */
export const REQUIRED_LABELS = ['Query', 'Plan', 'Step']
/** Chromium as root in a container, without a GPU, talking to nothing but loopback. */
const CHROMIUM_FLAGS = [
  '--no-sandbox',
  '--disable-gpu',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
]

function usage(message) {
  process.stderr.write(`browser-check: ${message}\n`)
  process.exit(2)
}

function options() {
  let parsed
  try {
    parsed = parseArgs({
      options: {
        'query-id': { type: 'string' },
        'browser-url': { type: 'string', default: 'http://127.0.0.1:7474/browser/' },
        bolt: { type: 'string', default: 'neo4j://127.0.0.1:7687' },
        user: { type: 'string', default: process.env.KGRAG_NEO4J_USER || 'neo4j' },
        password: { type: 'string', default: process.env.KGRAG_NEO4J_PASSWORD || '' },
        style: { type: 'string', default: resolve(HERE, '../../docs/kgrag.grass') },
        screenshot: { type: 'string', default: 'neo4j-browser-trace.png' },
        json: { type: 'string' },
        chromium: { type: 'string', default: '/usr/bin/chromium' },
        'timeout-s': { type: 'string', default: '90' },
        'expect-step-types': { type: 'string', default: '' },
      },
    }).values
  } catch (e) {
    usage(e.message)
  }
  if (!parsed['query-id'] || !/^q_[0-9a-f]+$/.test(parsed['query-id'])) {
    usage('--query-id q_<hex> is required (a kgrag answer\'s query id)')
  }
  if (!parsed.password) usage('no password: set KGRAG_NEO4J_PASSWORD or pass --password')
  const timeoutS = Number(parsed['timeout-s'])
  if (!(timeoutS > 0)) usage('--timeout-s must be a positive number')
  return { ...parsed, timeoutMs: timeoutS * 1000 }
}

/**
 * The GraSS file as one `:style` command: its rules joined on one line. Browser's GraSS parser
 * (the same for `:style` and for a file dropped on the window) knows no comments: a comment
 * becomes part of the next selector, and an apostrophe in it opens a string; such a file is
 * refused here rather than half applied.
 */
export function grassForCommand(text) {
  if (text.includes('/*')) {
    throw new Error(
      'the style sheet has a /* comment */, which Neo4j Browser cannot parse: remove it',
    )
  }
  return text.replace(/\s+/g, ' ').trim()
}

/**
 * `node.Step { color: #26A69A; caption: '{type}'; }` -> { '#26a69a': 'Step' } (node rules). A
 * colour that several labels share names them all ('EmbeddingSpace|Migration'), so such nodes
 * are never taken for one of the labels a trace must show.
 */
export function labelsByColour(grass) {
  const out = {}
  for (const [, label, body] of grass.matchAll(/node\.([A-Za-z_][A-Za-z0-9_]*)\s*\{([^}]*)\}/g)) {
    const colour = /(?:^|;|\s)color:\s*(#[0-9A-Fa-f]{6})/.exec(body)
    if (colour) {
      const key = colour[1].toLowerCase()
      out[key] = key in out ? `${out[key]}|${label}` : label
    }
  }
  return out
}

/** `node.Step { caption: '{type}' }` -> { Step: 'type' }. */
export function captionProperties(grass) {
  const out = {}
  for (const [, label, body] of grass.matchAll(/node\.([A-Za-z_][A-Za-z0-9_]*)\s*\{([^}]*)\}/g)) {
    const caption = /caption:\s*'\{([^}']+)\}'/.exec(body)
    if (caption) out[label] = caption[1]
  }
  return out
}

function normaliseColour(value) {
  if (!value) return ''
  const rgb = /rgba?\((\d+),\s*(\d+),\s*(\d+)/.exec(value)
  if (rgb) {
    return '#' + rgb.slice(1, 4).map((n) => Number(n).toString(16).padStart(2, '0')).join('')
  }
  return value.trim().toLowerCase()
}

async function main() {
  const opts = options()
  const grass = readFileSync(opts.style, 'utf8')
  const colours = labelsByColour(grass)
  const captions = captionProperties(grass)
  const expectedSteps = opts['expect-step-types'].split(',').filter(Boolean)
  const findings = {
    browser_url: opts['browser-url'],
    bolt: opts.bolt,
    query_id: opts['query-id'],
    cypher: TRACE_CYPHER,
    style: opts.style,
    screenshot: resolve(opts.screenshot),
    steps: [],
    failures: [],
  }
  const started = Date.now()
  const step = (what) => {
    findings.steps.push({ what, at_s: (Date.now() - started) / 1000 })
    process.stderr.write(`browser-check: ${what}\n`)
  }
  const fail = (message) => {
    findings.failures.push(message)
  }
  const browserOrigin = new URL(opts['browser-url']).origin
  const profile = mkdtempSync(join(tmpdir(), 'kgrag-browser-check-'))
  let context
  try {
    context = await chromium.launchPersistentContext(profile, {
      executablePath: opts.chromium,
      headless: true,
      args: CHROMIUM_FLAGS,
      viewport: { width: 1600, height: 1000 },
      timeout: opts.timeoutMs,
    })
    const page = context.pages()[0] || (await context.newPage())
    page.setDefaultTimeout(opts.timeoutMs)
    // Browser's own files and its Bolt WebSocket only (WebSockets are not routed).
    await page.route('**/*', (route) => {
      const url = route.request().url()
      return url.startsWith(browserOrigin) ? route.continue() : route.abort()
    })

    step(`opening ${opts['browser-url']}`)
    await page.goto(opts['browser-url'])
    await page.waitForSelector('[data-testid=boltaddress]')
    findings.browser_version = await page.evaluate(
      () => document.querySelector('meta[name=version]')?.content ?? null,
    )
    await page.fill('[data-testid=boltaddress]', opts.bolt)
    await page.fill('[data-testid=username]', opts.user)
    await page.fill('[data-testid=password]', opts.password)
    step(`connecting to ${opts.bolt} as ${opts.user}`)
    await page.click('[data-testid=connect]')
    // connected, or an error from the driver (wrong password, nothing on that port, ...)
    const outcome = page
      .getByText(/You are connected as user|Neo\.\w+Error|ServiceUnavailable|connection fail/i)
      .first()
    await outcome.waitFor().catch(() => {})
    const connected = await page.getByText('You are connected as user').count()
    if (!connected) {
      const text = (await page.locator('[data-testid=stream]').innerText().catch(() => ''))
        .split('\n')
        .filter((line) => /error|fail|unavailable|unauthori[sz]ed/i.test(line))
        .join(' ')
        .trim()
      throw new Error(`Browser did not connect to ${opts.bolt}: ${text || 'no answer'}`)
    }
    findings.connected = true

    const run = async (command) => {
      const before = await page.locator('[data-testid=frame]').count()
      const editor = page.locator('#monaco-main-editor textarea')
      await editor.click()
      await page.keyboard.press('Control+A')
      await page.keyboard.press('Delete')
      // insertText: one input event, so Monaco does not auto-close brackets and quotes
      await page.keyboard.insertText(command)
      await page.keyboard.press('Control+Enter')
      await page.waitForFunction(
        (n) => document.querySelectorAll('[data-testid=frame]').length > n,
        before,
      )
      // frames are prepended: the newest is the first
      return page.locator('[data-testid=frame]').first()
    }
    const frameError = async (frame) => {
      const error = frame.locator('[data-testid=errorBanner], .error-header, [class*=ErrorText]')
      return (await error.count()) ? (await error.first().innerText()).trim() : ''
    }

    step(`applying the style sheet ${opts.style}`)
    const styleFrame = await run(`:style ${grassForCommand(grass)}`)
    // applied, Browser shows the style now in force; refused, an error naming the GraSS
    await styleFrame.getByText(/node\.Step|Could not parse grass/).first().waitFor()
    const styleText = await styleFrame.innerText()
    if (/Could not parse grass/i.test(styleText)) {
      fail(`Browser refused the style sheet: ${styleText.slice(0, 300)}`)
    }
    findings.style_applied = !findings.failures.length

    // Browser also fetches and draws the relationships between any two result nodes (its
    // "Connect result nodes" setting): off, it draws the trace's paths and nothing else
    step(':config autoComplete: false')
    const configFrame = await run(':config autoComplete: false')
    await configFrame.getByText('"autoComplete": false', { exact: false }).first().waitFor()

    step(`:param id => '${opts['query-id']}'`)
    const paramFrame = await run(`:param id => '${opts['query-id']}'`)
    await paramFrame.getByText(opts['query-id'], { exact: false }).first().waitFor()
    const paramError = await frameError(paramFrame)
    if (paramError) fail(`:param failed: ${paramError}`)

    step(TRACE_CYPHER)
    const frame = await run(TRACE_CYPHER)
    await frame.locator('button[title=Fullscreen]').click()
    const svg = frame.locator('svg.neod3viz, svg[class*=neod3viz], svg').filter({
      has: page.locator('g.node'),
    })
    await svg
      .first()
      .waitFor()
      .catch(async () => {
        const text = (await frame.innerText()).replace(/\s+/g, ' ').slice(0, 400)
        throw new Error(`Browser drew no graph for ${opts['query-id']}: ${text}`)
      })
    // the force layout moves nodes for a while: wait until their positions settle
    let last = ''
    for (let i = 0; i < 40; i++) {
      await page.waitForTimeout(500)
      const now = await frame
        .locator('g.node')
        .evaluateAll((ns) => ns.map((n) => n.getAttribute('transform')).join('|'))
      if (now === last) break
      last = now
    }
    await frame.locator('button[aria-label=zoom-to-fit]').click()
    await page.waitForTimeout(1000)
    step('graph drawn')
    findings.drawn_nodes = await frame.locator('g.node').evaluateAll((nodes) =>
      nodes.map((n) => {
        const circle = n.querySelector('circle.b-outline')
        return {
          fill: circle ? circle.getAttribute('fill') || getComputedStyle(circle).fill : '',
          caption: [...n.querySelectorAll('text')]
            .map((t) => t.textContent)
            .join(' ')
            .trim(),
        }
      }),
    )
    for (const node of findings.drawn_nodes) {
      node.fill = normaliseColour(node.fill)
      node.label = colours[node.fill] ?? null
    }
    findings.drawn_relationships = await frame.locator('g.relationship').count()
    // Browser's own account of the result: the labels and counts of its overview panel
    findings.overview = (
      await frame
        .locator('[data-testid=vizInspector], [class*=Overview], [class*=overview]')
        .first()
        .innerText()
        .catch(() => '')
    ).trim()
    findings.frame_text = (await frame.innerText()).slice(0, 2000)

    const drawnLabels = new Set(findings.drawn_nodes.map((n) => n.label).filter(Boolean))
    findings.drawn_labels = [...drawnLabels].sort()
    for (const label of REQUIRED_LABELS) {
      if (!drawnLabels.has(label)) {
        fail(`no ${label} node drawn (drawn: ${findings.drawn_labels.join(', ') || 'none'})`)
      }
    }
    const stepCaptions = findings.drawn_nodes.filter((n) => n.label === 'Step').map((n) => n.caption)
    findings.step_captions = stepCaptions
    if (captions.Step === 'type') {
      const bad = stepCaptions.filter((c) => !/^[a-z][a-z_]*[a-z]$/.test(c))
      if (bad.length) fail(`Step nodes are not captioned with their type: ${bad.join(', ')}`)
    }
    for (const type of expectedSteps) {
      if (!stepCaptions.includes(type)) {
        fail(`no Step captioned ${type} (Step captions: ${stepCaptions.join(', ')})`)
      }
    }
    findings.query_captions = findings.drawn_nodes
      .filter((n) => n.label === 'Query')
      .map((n) => n.caption)

    step(`saving the screenshot ${findings.screenshot}`)
    await frame.screenshot({ path: findings.screenshot })
  } catch (e) {
    fail(e.message.split('\n')[0])
  } finally {
    if (context) await context.close().catch(() => {})
    rmSync(profile, { recursive: true, force: true })
  }
  findings.ok = findings.failures.length === 0
  findings.seconds = (Date.now() - started) / 1000
  if (opts.json) writeFileSync(opts.json, JSON.stringify(findings, null, 2) + '\n')
  for (const f of findings.failures) process.stderr.write(`browser-check: FAILED: ${f}\n`)
  if (findings.ok) {
    const counts = {}
    for (const n of findings.drawn_nodes) counts[n.label ?? '?'] = (counts[n.label ?? '?'] || 0) + 1
    process.stderr.write(
      `browser-check: ok: Browser drew ${findings.drawn_nodes.length} nodes (` +
        Object.entries(counts)
          .map(([k, v]) => `${k} ${v}`)
          .join(', ') +
        `), Step captions ${(findings.step_captions || []).join(', ')}\n`,
    )
  }
  process.exit(findings.ok ? 0 : 1)
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  await main()
}
