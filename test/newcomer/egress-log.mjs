// Loaded with `node --import` (NODE_OPTIONS) into every Node process of a sandbox run, by
// test/newcomer/sandbox-registry.test.ts: writes each TCP connection a process starts, and each
// name it asks DNS for, to the file named by ESCALATOR_TEST_EGRESS_LOG (one JSON line each), before
// the connection or lookup happens. Nothing is refused here: Escalator must not try. Every
// client in Node (fetch/undici, http, https, tls, ioredis) connects through
// net.Socket.prototype.connect, and resolves names through dns.lookup.
import dns from 'node:dns';
import { appendFileSync } from 'node:fs';
import net from 'node:net';

const file = process.env.ESCALATOR_TEST_EGRESS_LOG;
if (file) {
  const write = (entry) => {
    try {
      appendFileSync(file, `${JSON.stringify({ pid: process.pid, ...entry })}\n`);
    } catch {
      // the test has finished and removed its folder
    }
  };
  const connect = net.Socket.prototype.connect;
  net.Socket.prototype.connect = function (...args) {
    // (options[, listener]), (port[, host][, listener]), (path[, listener]), or Node's own normalized [options, listener]
    let options = Array.isArray(args[0]) ? args[0][0] : args[0];
    if (typeof options !== 'object' || options === null)
      options =
        typeof options === 'string' && !/^\d+$/.test(options)
          ? { path: options }
          : { port: options, host: typeof args[1] === 'string' ? args[1] : undefined };
    if (typeof options.path !== 'string' || options.path === '')
      write({ kind: 'connect', host: options.host ?? 'localhost', port: Number(options.port) });
    return connect.apply(this, args);
  };
  const lookup = dns.lookup;
  dns.lookup = function (hostname, ...rest) {
    write({ kind: 'lookup', host: hostname });
    return lookup.call(this, hostname, ...rest);
  };
  const lookupPromise = dns.promises.lookup;
  dns.promises.lookup = function (hostname, ...rest) {
    write({ kind: 'lookup', host: hostname });
    return lookupPromise.call(this, hostname, ...rest);
  };
}
