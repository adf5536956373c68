"""A raw asyncio HTTP/1.1 server that answers every request with a fixed `{}`: the trivial
endpoint bench/serving.py measures its client against (the client's own ceiling).

    python bench/trivial_http.py PORT      # prints "ready" once listening on 127.0.0.1
"""
import argparse
import asyncio

REPLY = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"


class FixedReply(asyncio.Protocol):
    def connection_made(self, transport):
        self.transport, self.buffer = transport, b""

    def data_received(self, data):
        self.buffer += data
        while True:  # one reply per complete request: headers, then Content-Length bytes
            head_end = self.buffer.find(b"\r\n\r\n")
            if head_end < 0:
                return
            head = self.buffer[:head_end].lower()
            i = head.find(b"content-length:")
            n = int(head[i + 15:].split(b"\r\n")[0]) if i >= 0 else 0
            if len(self.buffer) < head_end + 4 + n:
                return
            self.buffer = self.buffer[head_end + 4 + n:]
            self.transport.write(REPLY)


async def main(port):
    server = await asyncio.get_running_loop().create_server(FixedReply, "127.0.0.1", port)
    print("ready", flush=True)
    await server.serve_forever()


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description="A trivial HTTP server answering {} (the "
                                     "client's ceiling in bench/serving.py).")
    parser.add_argument("port", type=int, help="the port to listen on, on 127.0.0.1")
    asyncio.run(main(parser.parse_args().port))
