// Runs one GossipSub case on the JS implementation (@libp2p/gossipsub) and writes the result.
//
//   HEDGEROW_GOSSIPSUB_JS=/path/with/node_modules node gossipsub_js_runner.mjs case.json result.json
//
// The case and result formats are described in benchmarks/anchors/gossipsub_js.py, which
// writes the case and calls this script; it is not meant to be run by hand.
//
// What this script does (our code; the implementation is only imported):
// - Time is the case's clock: @sinonjs/fake-timers replaces setTimeout/setInterval/Date
//   before anything else is loaded, and the run advances the fake clock with tickAsync,
//   which lets every promise settle between two timers.  A run therefore takes as long
//   as the implementation's work, not as long as the simulated time.
// - Each node is a GossipSub instance built on stub components (registrar, connection
//   manager, peer store), the way the package's own multi-node tests build theirs; each
//   edge of the case is a pair of in-memory connections (multiaddrConnectionPair and
//   mockMuxer of @libp2p/utils).  Every write on a connection is delivered after the
//   edge's latency (one value, or one per edge) by a timer of the fake clock, in order.
// - Math.random is replaced by a generator seeded with the case's seed (and its optional
//   replicate), so peer selection (shuffles) is reproducible; node keys are derived from
//   the seed alone.
// - Node i starts before t = 0 so that its heartbeats fall on the case's heartbeat_offsets_ms[i]
//   modulo the heartbeat (a phase drawn uniformly in [0, heartbeat) when the case has none),
//   so heartbeats are not synchronised; at t = 0 every node subscribes to its topics and
//   every edge is connected.  Publications, warm-up and duration count from t = 0.
// - The IWANT trace (after warm-up): every IWANT sent and every IWANT answered, with the
//   indices of the messages they name, and every data copy received, with its sender.
// - Measured by wrapping instance methods: handleReceivedRpc (every data message
//   received: first arrivals and duplicates), sendRpc and sendRpcInBatch (control
//   entries sent, by type, after warm-up), and the 'gossipsub:heartbeat' event (mesh
//   size per subscribed topic at every heartbeat after warm-up).

import { readFileSync, writeFileSync, existsSync } from 'node:fs'
import path from 'node:path'
import { pathToFileURL } from 'node:url'
import { createRequire } from 'node:module'

const root = process.env.HEDGEROW_GOSSIPSUB_JS
if (root == null || root === '') {
  console.error('HEDGEROW_GOSSIPSUB_JS is not set')
  process.exit(2)
}
const modules = path.join(root, 'node_modules')

// Resolve an ES module of the scratch install by its package.json "exports" (Node cannot
// resolve bare specifiers from a folder other than this script's).
async function load (pkg, sub = '.') {
  const dir = path.join(modules, pkg)
  const meta = JSON.parse(readFileSync(path.join(dir, 'package.json'), 'utf8'))
  let target
  if (meta.exports != null) {
    const entry = typeof meta.exports === 'string' ? meta.exports : meta.exports[sub]
    target = typeof entry === 'string' ? entry : (entry.import ?? entry.default)
  } else {
    target = meta.main ?? 'index.js'
  }
  return import(pathToFileURL(path.join(dir, target)).href)
}

const [casePath, outPath] = process.argv.slice(2)
if (casePath == null || outPath == null) {
  console.error('usage: node gossipsub_js_runner.mjs case.json result.json')
  process.exit(1)
}
const kase = JSON.parse(readFileSync(casePath, 'utf8'))

// --- the fake clock, before any library is loaded ---------------------------------------
const require = createRequire(path.join(root, 'package.json'))
if (!existsSync(path.join(modules, '@sinonjs', 'fake-timers'))) {
  console.error(`@sinonjs/fake-timers is not installed under ${modules}`)
  process.exit(2)
}
const FakeTimers = require('@sinonjs/fake-timers')
const clock = FakeTimers.install({
  now: 1_700_000_000_000,
  toFake: ['setTimeout', 'clearTimeout', 'setInterval', 'clearInterval', 'Date'],
  shouldClearNativeTimers: true
})

// --- a seeded Math.random (mulberry32) --------------------------------------------------
function mulberry32 (a) {
  return function () {
    a |= 0; a = a + 0x6D2B79F5 | 0
    let t = Math.imul(a ^ a >>> 15, 1 | a)
    t = t + Math.imul(t ^ t >>> 7, 61 | t) ^ t
    return ((t ^ t >>> 14) >>> 0) / 4294967296
  }
}
const seed = Number(kase.seed ?? 1)
// a replicate (the case's optional "replicate", 0 by default) changes only the implementation's
// own draws: the same case, another sequence of Math.random
const replicate = Number(kase.replicate ?? 0)
Math.random = mulberry32((seed * 2654435761 + replicate * 2246822519) >>> 0)
const phaseRandom = mulberry32((seed * 40503 + 17) >>> 0)

const { gossipsub } = await load('@libp2p/gossipsub')
const { multiaddrConnectionPair, mockMuxer } = await load('@libp2p/utils')
const { generateKeyPairFromSeed } = await load('@libp2p/crypto', './keys')
const { peerIdFromPrivateKey } = await load('@libp2p/peer-id')
const { defaultLogger } = await load('@libp2p/logger')
const { TypedEventEmitter } = await load('@libp2p/interface')
const { multiaddr } = await load('@multiformats/multiaddr')

// --- the case ---------------------------------------------------------------------------
const N = kase.nodes
const p = kase.params
if (p.scoring) {
  console.error('case asks for peer scoring: this runner runs GossipSub with scoring off only')
  process.exit(3)
}
if (p.graft_on_subscribe === false) {
  console.error('graft_on_subscribe: the JS implementation always grafts a new subscriber while its mesh is below D_lo')
  process.exit(3)
}
if ((p.gossip_retransmission ?? 3) !== 3) {
  console.error('gossip_retransmission is a constant (3) in the JS implementation')
  process.exit(3)
}
// the protocol ids of the specifications, oldest first
const ladder = ['/meshsub/1.0.0', '/meshsub/1.1.0', '/meshsub/1.2.0']
const variantIndex = { 'v1.0': 1, 'v1.1': 2, 'v1.2': 3 }[p.variant]
if (variantIndex == null) {
  console.error(`unknown variant ${p.variant}`)
  process.exit(3)
}
const protocols = ladder.slice(0, variantIndex).reverse()
const topicName = (t) => `topic-${t}`
const hb = p.heartbeat_ms
const warmup = kase.warmup_ms
const duration = kase.duration_ms
const latencies = Array.isArray(kase.latency_ms)
  ? kase.latency_ms
  : kase.edges.map(() => kase.latency_ms)

const init = {
  D: p.D,
  Dlo: p.D_lo,
  Dhi: p.D_hi,
  Dlazy: p.D_lazy,
  Dscore: p.D_score,
  Dout: p.D_out,
  heartbeatInterval: hb,
  mcacheLength: p.mcache_len,
  mcacheGossip: p.mcache_gossip,
  gossipFactor: p.gossip_factor,
  fanoutTTL: p.fanout_ttl_ms,
  seenTTL: p.seen_ttl_ms,
  pruneBackoff: p.prune_backoff_ms,
  floodPublish: p.flood_publish,
  idontwantMinDataSize: p.idontwant_threshold == null ? Number.POSITIVE_INFINITY : p.idontwant_threshold,
  fallbackToFloodsub: false,
  doPX: false,
  tagMeshPeers: false,
  allowPublishToZeroTopicPeers: true,
  // scoring off: every weight that could move a score away from 0 is 0
  scoreParams: { IPColocationFactorWeight: 0, behaviourPenaltyWeight: 0, appSpecificWeight: 0, topics: {} }
}

// --- measurements -----------------------------------------------------------------------
const nPub = kase.publications.length
const firstSeen = Array.from({ length: nPub }, () => new Map()) // node -> t
const publisherOf = kase.publications.map((pub) => pub[1])
const duplicates = new Array(nPub).fill(0)
const deliveries = []
const kinds = ['ihave', 'iwant', 'graft', 'prune', 'idontwant']
const controlSent = Object.fromEntries(kinds.map((k) => [k, new Array(N).fill(0)]))
const controlIds = { ihave: new Array(N).fill(0), iwant: new Array(N).fill(0), idontwant: new Array(N).fill(0) }
const meshSamples = []
// the IWANT trace (after warm-up): every IWANT sent [t, node, peer, [k, ...]], every IWANT
// answered [t, node, asker, [k, ...]], and every data copy received [k, node, from, t]
const iwantLog = []
const answerLog = []
const copyLog = []
const heartbeats = new Array(N).fill(0)
let t0 = null
const now = () => Date.now() - t0
const measuring = () => t0 != null && now() >= warmup

function msgIndex (data) {
  if (data == null || data.length < 4) return -1
  return ((data[0] << 24) | (data[1] << 16) | (data[2] << 8) | data[3]) >>> 0
}

// the index of a message id: found in the message cache of the peer that announced it
function indexOfId (holder, msgId) {
  const g = nodes[holder].gs
  const entry = g.mcache.msgs.get(g.msgIdToStrFn(msgId))
  return entry == null ? -1 : msgIndex(entry.message.data)
}

function countControl (node, rpc) {
  if (!measuring() || rpc.control == null) return
  const c = rpc.control
  for (const k of kinds) {
    const entries = c[k]
    if (entries == null || entries.length === 0) continue
    controlSent[k][node] += entries.length
    if (k in controlIds) {
      for (const e of entries) controlIds[k][node] += (e.messageIDs?.length ?? 0)
    }
  }
}

// --- nodes ------------------------------------------------------------------------------
const nodes = []
const byPeer = new Map()
for (let i = 0; i < N; i++) {
  const seedBytes = new Uint8Array(32)
  new DataView(seedBytes.buffer).setUint32(0, seed >>> 0)
  new DataView(seedBytes.buffer).setUint32(4, i)
  const privateKey = await generateKeyPairFromSeed('Ed25519', seedBytes)
  const peerId = peerIdFromPrivateKey(privateKey)
  const handlers = new Map() // protocol -> handler
  const topologies = new Map() // protocol -> [topology]
  const connections = []
  let topologyId = 0
  const registrar = {
    handle: async (protocol, handler) => { handlers.set(protocol, handler) },
    unhandle: async (protocol) => { handlers.delete(protocol) },
    register: async (protocol, topology) => {
      const list = topologies.get(protocol) ?? []
      list.push(topology)
      topologies.set(protocol, list)
      return `topology-${topologyId++}`
    },
    unregister: () => {},
    getTopologies: (protocol) => topologies.get(protocol) ?? [],
    getHandler: (protocol) => handlers.get(protocol),
    getProtocols: () => [...handlers.keys()]
  }
  const connectionManager = {
    getConnections: (remote) => remote == null ? connections : connections.filter((c) => c.remotePeer.equals(remote)),
    openConnection: async (remote) => {
      const c = connections.find((c) => c.remotePeer.equals(remote))
      if (c == null) throw new Error('the case has no edge to this peer')
      return c
    },
    closeConnections: async () => {}
  }
  const peerStore = {
    merge: async () => {},
    get: async () => { throw new Error('no peer record') },
    consumePeerRecord: async () => false
  }
  const components = {
    privateKey,
    peerId,
    registrar,
    connectionManager,
    peerStore,
    events: new TypedEventEmitter(),
    logger: defaultLogger()
  }
  const gs = gossipsub(init)(components)
  gs.protocols = [...protocols]
  nodes.push({ i, gs, peerId, handlers, topologies, connections })
  byPeer.set(peerId.toString(), i)

  const origReceive = gs.handleReceivedRpc.bind(gs)
  gs.handleReceivedRpc = (from, rpc) => {
    if (rpc.messages != null && t0 != null) {
      for (const m of rpc.messages) {
        const k = msgIndex(m.data)
        if (k < 0 || k >= nPub) continue
        copyLog.push([k, i, byPeer.get(from.toString()) ?? -1, now()])
        if (publisherOf[k] === i || firstSeen[k].has(i)) {
          duplicates[k] += 1
        } else {
          const t = now()
          firstSeen[k].set(i, t)
          deliveries.push([k, i, t])
        }
      }
    }
    return origReceive(from, rpc)
  }
  const origSend = gs.sendRpc.bind(gs)
  gs.sendRpc = (id, rpc) => {
    const ok = origSend(id, rpc) // piggybacked gossip and control are added inside
    if (ok) countControl(i, rpc)
    if (ok && measuring() && rpc.control?.iwant?.length > 0) {
      const peer = byPeer.get(id)
      const ks = []
      for (const e of rpc.control.iwant) {
        for (const mid of e.messageIDs ?? []) ks.push(indexOfId(peer, mid))
      }
      iwantLog.push([now(), i, peer, ks])
    }
    return ok
  }
  const origIWant = gs.handleIWant.bind(gs)
  gs.handleIWant = (id, iwant) => {
    const msgs = origIWant(id, iwant)
    if (measuring() && msgs.length > 0) {
      answerLog.push([now(), i, byPeer.get(id), msgs.map((m) => msgIndex(m.data))])
    }
    return msgs
  }
  const origBatch = gs.sendRpcInBatch.bind(gs)
  gs.sendRpcInBatch = (tosend, rpc) => {
    origBatch(tosend, rpc) // drops the peers it could not send to from tosend
    for (let s = 0; s < tosend.size; s++) countControl(i, rpc)
  }
  gs.addEventListener('gossipsub:heartbeat', () => {
    if (!measuring()) return
    heartbeats[i] += 1
    for (const t of subsOf[i]) {
      meshSamples.push([i, t, gs.mesh.get(topicName(t))?.size ?? 0])
    }
  })
}

const subsOf = Array.from({ length: N }, () => [])
for (const [node, t] of kase.subscriptions) subsOf[node].push(t)

// --- the transport: an edge is two in-memory connections with the edge's latency ---------
function delayed (queue, latency) {
  // deliver every write after `latency` ms of the case's clock, keeping their order
  const pending = new Map() // due time -> events
  queue.send = (evt) => {
    const due = Date.now() + latency
    let batch = pending.get(due)
    if (batch == null) {
      batch = []
      pending.set(due, batch)
      setTimeout(() => {
        pending.delete(due)
        for (const e of batch) queue.dispatchEvent(e)
      }, latency)
    }
    batch.push(evt)
    return true
  }
}

function connectionOf (a, b, muxer, direction, addr) {
  // the mock muxer does not carry the protocol of a new stream: the opening side queues
  // the protocol it chose on the other side's connection, which takes it on 'stream'
  const conn = {
    chosen: [],
    peer: null,
    id: `${a.i}-${b.i}-${direction}`,
    remotePeer: b.peerId,
    remoteAddr: multiaddr(addr),
    direction,
    status: 'open',
    streams: [],
    limits: undefined,
    newStream: async (wanted) => {
      const list = Array.isArray(wanted) ? wanted : [wanted]
      const protocol = list.find((x) => b.handlers.has(x))
      if (protocol == null) throw new Error('no protocol in common')
      conn.peer.chosen.push(protocol)
      const stream = await muxer.createStream({ protocol })
      stream.protocol = protocol
      return stream
    }
  }
  muxer.addEventListener('stream', (evt) => {
    const stream = evt.detail
    stream.protocol = conn.chosen.shift()
    const handler = a.handlers.get(stream.protocol)
    if (handler != null) handler(stream, conn)
  })
  return conn
}

function ipOf (i) {
  return `/ip4/10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}/tcp/4001`
}

function connect (a, b, latency) {
  const [out, inb] = multiaddrConnectionPair()
  delayed(out.local, latency)
  delayed(inb.local, latency)
  const muxA = mockMuxer().createStreamMuxer(out)
  const muxB = mockMuxer().createStreamMuxer(inb)
  const connA = connectionOf(a, b, muxA, 'outbound', ipOf(b.i))
  const connB = connectionOf(b, a, muxB, 'inbound', ipOf(a.i))
  connA.peer = connB
  connB.peer = connA
  a.connections.push(connA)
  b.connections.push(connB)
  for (const proto of b.gs.protocols) {
    for (const topo of a.topologies.get(proto) ?? []) topo.onConnect?.(b.peerId, connA)
  }
  for (const proto of a.gs.protocols) {
    for (const topo of b.topologies.get(proto) ?? []) topo.onConnect?.(a.peerId, connB)
  }
}

// --- the run ----------------------------------------------------------------------------
const setupStart = performance.now()
// a node's first heartbeat comes GossipsubHeartbeatInitialDelay (100 ms) after its start: with
// the case's heartbeat offsets, node i starts so that its heartbeats fall on offset_i modulo hb
const offsets = kase.heartbeat_offsets_ms
const phases = offsets == null
  ? nodes.map(() => Math.floor(phaseRandom() * hb))
  : offsets.map((off) => (((off - 100) % hb) + hb) % hb)
const order = nodes.map((n) => n.i).sort((x, y) => phases[x] - phases[y] || x - y)
const tStart = Date.now()
for (const i of order) {
  const due = tStart + phases[i]
  if (due > Date.now()) await clock.tickAsync(due - Date.now())
  await nodes[i].gs.start()
}
await clock.tickAsync(tStart + hb - Date.now())
t0 = Date.now()
for (const n of nodes) {
  for (const t of subsOf[n.i]) n.gs.subscribe(topicName(t))
}
kase.edges.forEach(([a, b], e) => connect(nodes[a], nodes[b], latencies[e]))

const publishErrors = []
kase.publications.forEach(([t, publisher, topic, size], k) => {
  setTimeout(() => {
    const data = new Uint8Array(Math.max(4, size))
    new DataView(data.buffer).setUint32(0, k)
    nodes[publisher].gs.publish(topicName(topic), data).catch((err) => {
      publishErrors.push([k, String(err?.message ?? err)])
    })
  }, t)
})
const setupWall = (performance.now() - setupStart) / 1000

const runStart = performance.now()
await clock.tickAsync(duration)
const wall = (performance.now() - runStart) / 1000

const H = Math.round(heartbeats.reduce((a, b) => a + b, 0) / N)
const versions = {}
for (const pkg of ['@libp2p/gossipsub', '@libp2p/utils', '@sinonjs/fake-timers']) {
  versions[pkg] = JSON.parse(readFileSync(path.join(modules, pkg, 'package.json'), 'utf8')).version
}
const result = {
  deliveries,
  duplicates,
  control_sent: controlSent,
  control_ids: controlIds,
  heartbeats: H,
  mesh_degree: meshSamples,
  wall_seconds: wall,
  setup_wall_seconds: setupWall,
  simulated_ms: duration,
  publish_errors: publishErrors,
  iwant_log: iwantLog,
  iwant_answers: answerLog,
  copy_log: copyLog,
  phases_ms: phases.map((x) => (x + 100) % hb),
  implementation: versions
}
writeFileSync(outPath, JSON.stringify(result))
for (const n of nodes) n.gs.stop().catch(() => {})
clock.uninstall()
process.exit(0)
