//! Just enough HTTP/1.1 for one page and its JSON API: one request per connection, its head
//! parsed by `httparse`, a body only with `Content-Length`, and a limit on everything a client
//! sends (head size, header count, body size, a deadline for the whole request), each refusal
//! a status with a reason.
//!
//! Why not an HTTP server crate: tiny_http 0.12 (the usual synchronous choice) reads header
//! lines without a bound and, dropping a request whose body was not read, allocates a buffer of
//! the size the client claimed (a claimed `Content-Length: 10^15` fails to allocate, which
//! aborts); the async servers bring a runtime this program has no other use for.

use super::api::{Api, Incoming, Outgoing};
use std::io::{self, Read, Write};
use std::net::{Shutdown, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

/// The request line and headers at most.
pub const MAX_HEAD: usize = 16 * 1024;

/// Headers at most.
const MAX_HEADERS: usize = 64;

/// A request body at most; the API's bodies are a few hundred bytes.
pub const MAX_BODY: usize = 64 * 1024;

/// How long a client may take to read the answer (per write).
pub const IO_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a client may take to send its whole request, head and body, from when it was
/// accepted: a deadline, not a limit per read, so that a client sending a byte now and then
/// cannot keep its connection (and its thread) for longer.
pub const REQUEST_DEADLINE: Duration = Duration::from_secs(10);

/// What is read of a refused body before the connection closes (see [`close`]).
const DRAIN: u64 = 1024 * 1024;

/// How long [`close`] waits for the client to finish sending.
const LINGER: Duration = Duration::from_secs(2);

/// Reads one request from `stream`, answers it and returns the status sent (0 when the client
/// sent nothing).
pub fn exchange<S: Read + Write>(stream: &mut S, api: &Api) -> io::Result<u16> {
    let (head_len, buffer) = match read_head(stream) {
        Ok(Head::Read { len, bytes }) => (len, bytes),
        Ok(Head::Nothing) => return Ok(0),
        Ok(Head::Refused(refusal)) => return send(stream, &refusal),
        Err(err) if is_timeout(&err) => return send(stream, &too_slow("head")),
        Err(err) => return Err(err),
    };
    let mut headers = [httparse::EMPTY_HEADER; MAX_HEADERS];
    let mut request = httparse::Request::new(&mut headers);
    if let Err(err) = request.parse(&buffer[..head_len]) {
        let status = if err == httparse::Error::TooManyHeaders { 431 } else { 400 };
        return send(stream, &Outgoing::error(status, format!("malformed HTTP request: {err}")));
    }
    let method = request.method.unwrap_or("");
    let target = request.path.unwrap_or("");
    let header = |name: &str| {
        request
            .headers
            .iter()
            .find(|h| h.name.eq_ignore_ascii_case(name))
            .map(|h| std::str::from_utf8(h.value).unwrap_or(""))
    };
    if header("Transfer-Encoding").is_some() {
        return send(stream, &Outgoing::error(411, "chunked bodies are not taken: send the body with Content-Length"));
    }
    // Two lengths that disagree leave the body's end to whoever reads it (request smuggling
    // between a proxy and this server): refused.
    let mut lengths =
        request.headers.iter().filter(|h| h.name.eq_ignore_ascii_case("Content-Length")).map(|h| h.value.trim_ascii());
    if let Some(first) = lengths.next() {
        if lengths.any(|other| other != first) {
            return send(stream, &Outgoing::error(400, "two different Content-Length headers"));
        }
    }
    let length = match header("Content-Length").map(|v| v.trim().parse::<u64>()) {
        None => 0,
        Some(Ok(n)) => n,
        Some(Err(_)) => return send(stream, &Outgoing::error(400, "Content-Length is not a number")),
    };
    if length > MAX_BODY as u64 {
        return send(stream, &Outgoing::error(413, format!("the body is {length} bytes; at most {MAX_BODY}")));
    }
    if !target.starts_with('/') {
        return send(stream, &Outgoing::error(400, "the request target must be a path starting with /"));
    }
    if header("Expect").is_some_and(|v| v.eq_ignore_ascii_case("100-continue")) {
        stream.write_all(b"HTTP/1.1 100 Continue\r\n\r\n")?;
        stream.flush()?;
    }
    // The part of the body that came with the head, then the rest.
    let length = length as usize;
    let mut body = buffer[head_len..].to_vec();
    if body.len() < length {
        let missing = length - body.len();
        let mut rest = Vec::with_capacity(missing);
        match Read::by_ref(stream).take(missing as u64).read_to_end(&mut rest) {
            Ok(_) => {}
            Err(err) if is_timeout(&err) => return send(stream, &too_slow("body")),
            Err(err) => return Err(err),
        }
        if rest.len() < missing {
            return send(
                stream,
                &Outgoing::error(400, format!("the body ended after {} of {length} bytes", body.len() + rest.len())),
            );
        }
        body.extend_from_slice(&rest);
    }
    body.truncate(length);
    let out = api.handle(&Incoming {
        method,
        target,
        host: header("Host"),
        content_type: header("Content-Type"),
        body: &body,
    });
    send(stream, &out)
}

/// Whether a read failed for lack of time (the deadline, or a socket's timeout).
fn is_timeout(err: &io::Error) -> bool {
    matches!(err.kind(), io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock)
}

/// The answer to a request whose `part` did not all come in time.
fn too_slow(part: &str) -> Outgoing {
    Outgoing::error(408, format!("the request {part} did not all come within {} s", REQUEST_DEADLINE.as_secs()))
}

/// A connection whose reads end at a deadline: each read waits only for the time left, and
/// once it is gone a read fails with `TimedOut`. The first write (the answer) clears
/// `reading`, which tells the server that the request is in.
pub struct Deadline<'a> {
    stream: &'a TcpStream,
    deadline: Instant,
    reading: &'a AtomicBool,
}

impl<'a> Deadline<'a> {
    /// `stream`, readable until `deadline`; `reading` is cleared at the first write.
    pub fn new(stream: &'a TcpStream, deadline: Instant, reading: &'a AtomicBool) -> Deadline<'a> {
        Deadline { stream, deadline, reading }
    }
}

impl Read for Deadline<'_> {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        let left = self.deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Err(io::Error::new(io::ErrorKind::TimedOut, "the request deadline passed"));
        }
        self.stream.set_read_timeout(Some(left))?;
        let mut stream = self.stream;
        stream.read(buf)
    }
}

impl Write for Deadline<'_> {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.reading.store(false, Ordering::SeqCst);
        let mut stream = self.stream;
        stream.write(buf)
    }

    fn flush(&mut self) -> io::Result<()> {
        let mut stream = self.stream;
        stream.flush()
    }
}

/// What came of reading a request head.
enum Head {
    /// The head's length, and every byte read so far: the head and what came of the body.
    Read { len: usize, bytes: Vec<u8> },
    /// A head too long or cut short.
    Refused(Outgoing),
    /// A connection closed before sending anything (browsers open spare connections).
    Nothing,
}

/// Reads until the end of the head.
fn read_head<S: Read>(stream: &mut S) -> io::Result<Head> {
    let mut buffer = Vec::with_capacity(4096);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = find_head_end(&buffer) {
            return Ok(Head::Read { len: end, bytes: buffer });
        }
        if buffer.len() >= MAX_HEAD {
            return Ok(Head::Refused(Outgoing::error(431, format!("the request head is over {MAX_HEAD} bytes"))));
        }
        let n = stream.read(&mut chunk)?;
        if n == 0 && buffer.is_empty() {
            return Ok(Head::Nothing);
        }
        if n == 0 {
            return Ok(Head::Refused(Outgoing::error(400, "the connection closed before the end of the request head")));
        }
        buffer.extend_from_slice(&chunk[..n]);
    }
}

/// Where the head ends (just after its blank line), looked for within [`MAX_HEAD`] bytes.
fn find_head_end(buffer: &[u8]) -> Option<usize> {
    let window = &buffer[..buffer.len().min(MAX_HEAD)];
    window.windows(4).position(|w| w == b"\r\n\r\n").map(|i| i + 4)
}

/// Ends a connection after its answer: the client is told that nothing more comes, then what it
/// still sends (the rest of a refused body) is read and dropped, up to [`DRAIN`] bytes or
/// [`LINGER`], so that closing with unread bytes does not reset the connection before the
/// client has read the answer.
pub fn close(stream: &TcpStream) {
    let _ = stream.shutdown(Shutdown::Write);
    let _ = stream.set_read_timeout(Some(LINGER));
    let _ = io::copy(&mut stream.take(DRAIN), &mut io::sink());
}

/// Writes the response; the connection closes after it.
pub fn send<S: Write>(stream: &mut S, out: &Outgoing) -> io::Result<u16> {
    let mut head = format!(
        "HTTP/1.1 {} {}\r\nContent-Type: {}\r\nContent-Length: {}\r\nConnection: close\r\n\
         Cache-Control: no-store\r\nX-Content-Type-Options: nosniff\r\nReferrer-Policy: no-referrer\r\n\
         Content-Security-Policy: default-src 'self'; img-src 'self' data:; frame-ancestors 'none'\r\n",
        out.status,
        reason(out.status),
        out.content_type,
        out.body.len()
    );
    if let Some(allow) = out.allow {
        head.push_str(&format!("Allow: {allow}\r\n"));
    }
    head.push_str("\r\n");
    stream.write_all(head.as_bytes())?;
    stream.write_all(&out.body)?;
    stream.flush()?;
    Ok(out.status)
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        403 => "Forbidden",
        404 => "Not Found",
        405 => "Method Not Allowed",
        408 => "Request Timeout",
        409 => "Conflict",
        411 => "Length Required",
        413 => "Content Too Large",
        415 => "Unsupported Media Type",
        431 => "Request Header Fields Too Large",
        500 => "Internal Server Error",
        503 => "Service Unavailable",
        _ => "",
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::serve::api::Settings;
    use camelot_arena::PlayerSpec;

    /// A connection: what the client sent, and what the server wrote back.
    struct Pipe {
        input: io::Cursor<Vec<u8>>,
        output: Vec<u8>,
    }

    impl Read for Pipe {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            self.input.read(buf)
        }
    }

    impl Write for Pipe {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.output.write(buf)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    fn test_api() -> Api {
        Api::new(Settings {
            players: vec![PlayerSpec::parse("random").expect("spec")],
            variant: "camelot".to_string(),
            overrides: Vec::new(),
            seed: 1,
            hosts: None,
        })
    }

    fn exchange_bytes(request: &[u8]) -> (u16, String) {
        let api = test_api();
        let mut pipe = Pipe { input: io::Cursor::new(request.to_vec()), output: Vec::new() };
        let status = exchange(&mut pipe, &api).expect("in memory");
        (status, String::from_utf8_lossy(&pipe.output).into_owned())
    }

    #[test]
    fn a_request_is_answered_with_length_and_close() {
        let (status, text) = exchange_bytes(b"GET /api/info HTTP/1.1\r\nHost: x\r\n\r\n");
        assert_eq!(status, 200);
        assert!(text.starts_with("HTTP/1.1 200 OK\r\n"), "{text}");
        assert!(text.contains("Connection: close\r\n") && text.contains("Content-Type: application/json\r\n"));
        let body = text.split("\r\n\r\n").nth(1).expect("a body");
        assert!(text.contains(&format!("Content-Length: {}\r\n", body.len())));
    }

    #[test]
    fn a_body_split_across_reads_is_read_whole() {
        let body = r#"{"side":"black"}"#;
        let request = format!(
            "POST /api/new HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        let (status, text) = exchange_bytes(request.as_bytes());
        assert_eq!(status, 200, "{text}");
        assert!(text.contains(r#""human":"black""#));
    }

    #[test]
    fn limits_and_malformed_heads_are_refused() {
        let too_big = format!("POST /api/new HTTP/1.1\r\nContent-Length: {}\r\n\r\n{{}}", u64::MAX);
        assert_eq!(exchange_bytes(too_big.as_bytes()).0, 413);
        let long_head = format!("GET /{} HTTP/1.1\r\n\r\n", "a".repeat(MAX_HEAD));
        assert_eq!(exchange_bytes(long_head.as_bytes()).0, 431);
        let many: String = (0..MAX_HEADERS + 1).map(|i| format!("X-{i}: 1\r\n")).collect();
        assert_eq!(exchange_bytes(format!("GET / HTTP/1.1\r\n{many}\r\n").as_bytes()).0, 431);
        assert_eq!(exchange_bytes(b"GET / HTTP/1.1\r\n").0, 400);
        assert_eq!(exchange_bytes(b"\x16\x03\x01\x02\x00\x01\x00\x01\xfc\x03\x03\r\n\r\n").0, 400);
        assert_eq!(exchange_bytes(b"GET http://x/ HTTP/1.1\r\n\r\n").0, 400);
        assert_eq!(exchange_bytes(b"POST /api/new HTTP/1.1\r\nContent-Length: ten\r\n\r\n").0, 400);
        assert_eq!(exchange_bytes(b"POST /api/new HTTP/1.1\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n").0, 411);
        let (status, text) = exchange_bytes(b"POST /api/new HTTP/1.1\r\nContent-Length: 10\r\n\r\n{}");
        assert_eq!(status, 400);
        assert!(text.contains("the body ended after 2 of 10 bytes"), "{text}");
        let (status, text) = exchange_bytes(b"DELETE /api/new HTTP/1.1\r\n\r\n");
        assert_eq!(status, 405);
        assert!(text.contains("Allow: POST\r\n"));
    }

    /// A client that sends `sent` and then nothing until the deadline.
    struct Stalled(io::Cursor<Vec<u8>>, Vec<u8>);

    impl Read for Stalled {
        fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
            match self.0.read(buf)? {
                0 => Err(io::Error::new(io::ErrorKind::TimedOut, "the request deadline passed")),
                n => Ok(n),
            }
        }
    }

    impl Write for Stalled {
        fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
            self.1.write(buf)
        }
        fn flush(&mut self) -> io::Result<()> {
            Ok(())
        }
    }

    #[test]
    fn a_request_not_all_sent_in_time_is_answered_408_and_two_lengths_400() {
        let api = test_api();
        let stalled = |sent: &[u8]| {
            let mut client = Stalled(io::Cursor::new(sent.to_vec()), Vec::new());
            let status = exchange(&mut client, &api).expect("in memory");
            (status, String::from_utf8_lossy(&client.1).into_owned())
        };
        let (status, text) = stalled(b"POST /api/new HTTP/1.1\r\nContent-Length: 10\r\n\r\n{}");
        assert_eq!(status, 408);
        assert!(text.starts_with("HTTP/1.1 408 Request Timeout\r\n"), "{text}");
        assert!(text.contains("the request body did not all come within 10 s"), "{text}");
        let (status, text) = stalled(b"GET /api/info HTTP/1.1\r\nHost: x");
        assert_eq!(status, 408);
        assert!(text.contains("the request head did not all come within 10 s"), "{text}");
        let two = b"POST /api/new HTTP/1.1\r\nContent-Length: 2\r\ncontent-length: 3\r\n\r\n{}";
        assert_eq!(exchange_bytes(two).0, 400);
        let same = b"POST /api/new HTTP/1.1\r\nContent-Type: application/json\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\n{}";
        assert_eq!(exchange_bytes(same).0, 200);
    }
}
