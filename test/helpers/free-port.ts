// A loopback port no one listens on now: daemon/runtime/free-port.ts, which the benchmark's
// private servers use too (one copy).

export { freePort } from '../../daemon/runtime/free-port.ts';
