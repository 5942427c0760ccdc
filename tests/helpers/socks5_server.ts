/**
 * A minimal SOCKS5 proxy for tests: no authentication, CONNECT only, and only to 127.0.0.1.
 *
 * @module
 */

/** A running proxy. */
export interface Socks5Server {
  /** Its port on 127.0.0.1. */
  port: number;
  /** `host:port` of every CONNECT it carried out. */
  connects: string[];
  /** Stop listening. */
  close(): void;
}

/** Start a proxy on 127.0.0.1 with a random port. */
export function startSocks5(): Socks5Server {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const connects: string[] = [];
  (async () => {
    for await (const conn of listener) handle(conn).catch(() => conn.close());
  })().catch(() => {});
  async function readN(conn: Deno.Conn, n: number): Promise<Uint8Array> {
    const out = new Uint8Array(n);
    let got = 0;
    while (got < n) {
      const r = await conn.read(out.subarray(got));
      if (r === null) throw new Error("eof");
      got += r;
    }
    return out;
  }
  async function handle(conn: Deno.Conn) {
    const [, nMethods] = await readN(conn, 2);
    await readN(conn, nMethods);
    await conn.write(new Uint8Array([5, 0]));
    const [, cmd, , atyp] = await readN(conn, 4);
    let host: string;
    if (atyp === 1) host = [...await readN(conn, 4)].join(".");
    else if (atyp === 3) {
      const [len] = await readN(conn, 1);
      host = new TextDecoder().decode(await readN(conn, len));
    } else throw new Error("unsupported atyp");
    const pb = await readN(conn, 2);
    const port = (pb[0] << 8) | pb[1];
    if (cmd !== 1 || (host !== "127.0.0.1" && host !== "localhost")) {
      await conn.write(new Uint8Array([5, 2, 0, 1, 0, 0, 0, 0, 0, 0]));
      conn.close();
      return;
    }
    connects.push(`${host}:${port}`);
    const target = await Deno.connect({ hostname: "127.0.0.1", port });
    await conn.write(new Uint8Array([5, 0, 0, 1, 127, 0, 0, 1, 0, 0]));
    await Promise.all([
      conn.readable.pipeTo(target.writable).catch(() => {}),
      target.readable.pipeTo(conn.writable).catch(() => {}),
    ]);
  }
  return { port: (listener.addr as Deno.NetAddr).port, connects, close: () => listener.close() };
}
