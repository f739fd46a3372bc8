//! The HTTP/1.1 layer: parse request heads with httparse, answer with a
//! Content-Length (head and body in one write, TCP_NODELAY), keep the
//! connection alive; or break the wire on purpose for fault injection.
//! A watch answers with a [`Stream`]: chunked, one chunk flushed per
//! event, as the apiserver's watch handler does.

use super::object::Object;
use std::io::{self, BufWriter, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::thread;
use std::time::Duration;

/// One parsed request head (kubectl only sends body-less GETs).
#[derive(Debug, Clone)]
pub struct Request {
    /// `GET`, …
    pub method: String,
    /// The path without the query.
    pub path: String,
    /// The raw query string (after `?`, still percent-encoded).
    pub raw_query: String,
    /// Decoded query parameters, in order.
    pub query: Vec<(String, String)>,
    /// Header names (lower-cased) and values.
    pub headers: Vec<(String, String)>,
}

impl Request {
    /// The first value of a header (name in lower case).
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }

    /// The first value of a query parameter.
    pub fn param(&self, name: &str) -> Option<&str> {
        self.query
            .iter()
            .find(|(n, _)| n == name)
            .map(|(_, v)| v.as_str())
    }
}

/// A complete response.
#[derive(Debug, Clone)]
pub struct Response {
    /// HTTP status code.
    pub status: u16,
    /// Extra headers (Content-Type and Content-Length are always sent).
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Body,
}

impl Response {
    /// A JSON response.
    pub fn json(status: u16, value: &serde_json::Value) -> Self {
        Self {
            status,
            headers: Vec::new(),
            body: Body::from(serde_json::to_vec(value).expect("a Value always serializes")),
        }
    }
}

/// A body as the pieces it is written from: a list page is its envelope
/// and the stored objects themselves, never copied into one buffer.
#[derive(Debug, Clone, Default)]
pub struct Body(Vec<Piece>);

#[derive(Debug, Clone)]
enum Piece {
    Owned(Vec<u8>),
    Static(&'static [u8]),
    Shared(Object),
}

impl Piece {
    fn bytes(&self) -> &[u8] {
        match self {
            Self::Owned(bytes) => bytes,
            Self::Static(bytes) => bytes,
            Self::Shared(object) => object.json().as_bytes(),
        }
    }
}

impl From<Vec<u8>> for Body {
    fn from(bytes: Vec<u8>) -> Self {
        Self(vec![Piece::Owned(bytes)])
    }
}

impl Body {
    /// Append bytes.
    pub fn push(&mut self, bytes: Vec<u8>) {
        self.0.push(Piece::Owned(bytes));
    }

    /// Append constant bytes (no allocation).
    pub fn push_static(&mut self, bytes: &'static [u8]) {
        self.0.push(Piece::Static(bytes));
    }

    /// Append a stored object's JSON (shared, not copied).
    pub fn push_object(&mut self, object: &Object) {
        self.0.push(Piece::Shared(object.clone()));
    }

    /// The length in bytes.
    pub fn len(&self) -> usize {
        self.0.iter().map(|p| p.bytes().len()).sum()
    }

    /// Write the first `limit` bytes.
    fn write_to(&self, out: &mut impl Write, limit: usize) -> io::Result<()> {
        let mut left = limit;
        for piece in &self.0 {
            let bytes = piece.bytes();
            let n = bytes.len().min(left);
            out.write_all(&bytes[..n])?;
            left -= n;
            if left == 0 {
                break;
            }
        }
        Ok(())
    }
}

/// How a response goes on the wire.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Delivery {
    /// As it is.
    Normal,
    /// Not at all: the connection is closed before any header.
    CloseBeforeHeaders,
    /// Full Content-Length announced, half the body sent, connection closed.
    CloseMidBody,
    /// Full Content-Length announced, half the body sent, then nothing for
    /// this long (a client with a timeout gives up first), then closed.
    StallMidBody(Duration),
    /// The first half of the body, with a Content-Length that matches it.
    Truncated,
    /// As it is, after a delay.
    Delayed(Duration),
}

impl Delivery {
    /// How many bytes of a body of `length` this delivery writes.
    pub fn body_bytes(self, length: usize) -> usize {
        match self {
            Self::CloseBeforeHeaders => 0,
            Self::CloseMidBody | Self::StallMidBody(_) | Self::Truncated => length / 2,
            Self::Normal | Self::Delayed(_) => length,
        }
    }
}

/// What a [`Stream`] produces next.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Chunk {
    /// Bytes to send (and flush) as one chunk.
    Data(Vec<u8>),
    /// The end of the body: the terminating chunk; the connection stays open.
    End,
    /// The connection drops here, without the terminating chunk.
    Cut,
}

/// A body produced while it is sent (a watch): `next_chunk` blocks until
/// there is something to send.
pub trait Stream: Send {
    /// The next chunk.
    fn next_chunk(&mut self) -> Chunk;
    /// The client went away (a write failed): no more chunks are asked for.
    fn client_gone(&mut self);
}

/// What the request handler answers: a response, how it goes on the wire,
/// and for a watch the stream that follows the response's head.
pub type Reply = (Response, Delivery, Option<Box<dyn Stream>>);

/// A connection the server answers on: plain TCP or TLS over it.
pub trait Wire: Read + Write {
    /// Drop the connection. `abrupt`: as a crash would (no TLS
    /// close_notify), so the client sees a cut body as an unexpected EOF.
    fn close(&mut self, abrupt: bool);
}

impl Wire for TcpStream {
    fn close(&mut self, _abrupt: bool) {
        let _ = self.shutdown(Shutdown::Both);
    }
}

impl Wire for rustls::StreamOwned<rustls::ServerConnection, TcpStream> {
    fn close(&mut self, abrupt: bool) {
        if !abrupt {
            self.conn.send_close_notify();
            let _ = self.conn.complete_io(&mut self.sock);
        }
        let _ = self.sock.shutdown(Shutdown::Both);
    }
}

const MAX_HEAD: usize = 64 * 1024;

/// Serve every request of one connection until the client closes it.
pub fn serve_connection(
    stream: &mut dyn Wire,
    handle: &dyn Fn(&Request) -> Reply,
) -> io::Result<()> {
    let mut buffer = Vec::with_capacity(8192);
    loop {
        let Some((request, used)) = read_head(stream, &mut buffer)? else {
            return Ok(());
        };
        buffer.drain(..used);
        let (response, delivery, body_stream) = handle(&request);
        let close = request
            .header("connection")
            .is_some_and(|c| c.eq_ignore_ascii_case("close"));
        let open = match body_stream {
            Some(body_stream) => deliver_stream(stream, &response, delivery, body_stream)?,
            None => deliver(stream, &response, delivery)?,
        };
        if !open || close {
            stream.close(!open);
            return Ok(());
        }
    }
}

/// Read until one request head is complete: the request and the bytes it
/// used, or None when the client closed the connection.
fn read_head(stream: &mut dyn Wire, buffer: &mut Vec<u8>) -> io::Result<Option<(Request, usize)>> {
    let mut chunk = [0u8; 8192];
    loop {
        if !buffer.is_empty() {
            if let Some(parsed) = parse_head(buffer)? {
                return Ok(Some(parsed));
            }
        }
        if buffer.len() > MAX_HEAD {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                "request head too large",
            ));
        }
        let n = match stream.read(&mut chunk) {
            Ok(0) => return Ok(None),
            Ok(n) => n,
            Err(e) if e.kind() == io::ErrorKind::ConnectionReset => return Ok(None),
            Err(e) => return Err(e),
        };
        buffer.extend_from_slice(&chunk[..n]);
    }
}

fn parse_head(buffer: &[u8]) -> io::Result<Option<(Request, usize)>> {
    let mut headers = [httparse::EMPTY_HEADER; 64];
    let mut parsed = httparse::Request::new(&mut headers);
    let used = match parsed.parse(buffer) {
        Ok(httparse::Status::Complete(n)) => n,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(e) => return Err(io::Error::new(io::ErrorKind::InvalidData, e)),
    };
    let target = parsed.path.unwrap_or("/");
    let (path, raw_query) = target.split_once('?').unwrap_or((target, ""));
    let headers: Vec<(String, String)> = parsed
        .headers
        .iter()
        .map(|h| {
            (
                h.name.to_ascii_lowercase(),
                String::from_utf8_lossy(h.value).into_owned(),
            )
        })
        .collect();
    // Bodies are not expected; skip one if a client sends it anyway.
    let body_len: usize = headers
        .iter()
        .find(|(n, _)| n == "content-length")
        .and_then(|(_, v)| v.trim().parse().ok())
        .unwrap_or(0);
    if buffer.len() < used + body_len {
        return Ok(None);
    }
    let request = Request {
        method: parsed.method.unwrap_or("GET").to_owned(),
        path: percent_decode(path),
        raw_query: raw_query.to_owned(),
        query: parse_query(raw_query),
        headers,
    };
    Ok(Some((request, used + body_len)))
}

/// Write the response as `delivery` says; false when the connection must close.
fn deliver(stream: &mut dyn Wire, response: &Response, delivery: Delivery) -> io::Result<bool> {
    let length = response.body.len();
    match delivery {
        Delivery::CloseBeforeHeaders => return Ok(false),
        Delivery::Delayed(delay) => thread::sleep(delay),
        _ => {}
    }
    let sent = delivery.body_bytes(length);
    let announced = match delivery {
        Delivery::Truncated => sent,
        _ => length,
    };
    // Head and body leave in full buffers: no Nagle stall, few syscalls.
    let mut out = BufWriter::with_capacity(256 * 1024, &mut *stream);
    let written = out
        .write_all(head(response, announced).as_bytes())
        .and_then(|()| response.body.write_to(&mut out, sent))
        .and_then(|()| out.flush());
    drop(out);
    match written {
        Ok(()) => {}
        // The client gave up (a timeout): nothing more to do on this connection.
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
            ) =>
        {
            return Ok(false)
        }
        Err(e) => return Err(e),
    }
    if let Delivery::StallMidBody(stall) = delivery {
        thread::sleep(stall);
    }
    Ok(!matches!(
        delivery,
        Delivery::CloseMidBody | Delivery::StallMidBody(_)
    ))
}

/// Write the head, then each chunk of `body` as it comes (flushed: the
/// client sees every event at once); false when the connection must close.
fn deliver_stream(
    stream: &mut dyn Wire,
    response: &Response,
    delivery: Delivery,
    mut body: Box<dyn Stream>,
) -> io::Result<bool> {
    match delivery {
        Delivery::CloseBeforeHeaders => return Ok(false),
        Delivery::Delayed(delay) => thread::sleep(delay),
        _ => {}
    }
    let head = head_with(response, "Transfer-Encoding: chunked");
    let mut written = stream
        .write_all(head.as_bytes())
        .and_then(|()| stream.flush());
    let mut open = true;
    while written.is_ok() {
        let bytes = match body.next_chunk() {
            Chunk::Data(bytes) if bytes.is_empty() => continue,
            Chunk::Data(bytes) => bytes,
            Chunk::End => {
                written = stream.write_all(b"0\r\n\r\n").and_then(|()| stream.flush());
                break;
            }
            Chunk::Cut => {
                open = false;
                break;
            }
        };
        let mut chunk = format!("{:x}\r\n", bytes.len()).into_bytes();
        chunk.extend_from_slice(&bytes);
        chunk.extend_from_slice(b"\r\n");
        written = stream.write_all(&chunk).and_then(|()| stream.flush());
    }
    match written {
        Ok(()) => Ok(open),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::BrokenPipe | io::ErrorKind::ConnectionReset
            ) =>
        {
            body.client_gone();
            Ok(false)
        }
        Err(e) => {
            body.client_gone();
            Err(e)
        }
    }
}

fn head(response: &Response, content_length: usize) -> String {
    head_with(response, &format!("Content-Length: {content_length}"))
}

/// The status line and headers; `framing` says how the body ends.
fn head_with(response: &Response, framing: &str) -> String {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: application/json\r\n{framing}\r\n",
        response.status,
        reason_phrase(response.status)
    );
    for (name, value) in &response.headers {
        head.push_str(&format!("{name}: {value}\r\n"));
    }
    head.push_str("\r\n");
    head
}

fn reason_phrase(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        404 => "Not Found",
        405 => "Method Not Allowed",
        406 => "Not Acceptable",
        410 => "Gone",
        504 => "Gateway Timeout",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "Status",
    }
}

/// `a=1&b=x%3Dy` → [(a, 1), (b, x=y)].
pub fn parse_query(raw: &str) -> Vec<(String, String)> {
    raw.split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (name, value) = pair.split_once('=').unwrap_or((pair, ""));
            (percent_decode(name), percent_decode(value))
        })
        .collect()
}

/// Decode `%XX` escapes and `+` (a space in a query).
pub fn percent_decode(text: &str) -> String {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| (b as char).to_digit(16);
        match bytes[i] {
            b'%' if i + 2 < bytes.len() => match (hex(bytes[i + 1]), hex(bytes[i + 2])) {
                (Some(h), Some(l)) => {
                    out.push((h * 16 + l) as u8);
                    i += 3;
                    continue;
                }
                _ => out.push(b'%'),
            },
            b'+' => out.push(b' '),
            b => out.push(b),
        }
        i += 1;
    }
    String::from_utf8_lossy(&out).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_decode() {
        assert_eq!(
            parse_query("fieldSelector=status.phase%3DPending&limit=500&x"),
            vec![
                ("fieldSelector".into(), "status.phase=Pending".into()),
                ("limit".into(), "500".into()),
                ("x".into(), String::new())
            ]
        );
        assert_eq!(percent_decode("a%2"), "a%2");
        assert_eq!(percent_decode("%41+b"), "A b");
    }
}
