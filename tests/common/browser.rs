//! A headless Chromium driven through the DevTools protocol, for the tests of pages (the
//! replay page, a study's page).
//!
//! Chromium is driven over `--remote-debugging-pipe` (the protocol's JSON messages, each ended
//! by a NUL byte, on the browser's file descriptors 3 and 4, which `sh` wires to our pipes): no
//! websocket client, no port and no crate needed. scripts/test.sh installs Debian's `chromium`
//! when it is missing and it can (root with apt-get); without a browser a test fails where
//! one could be installed and is skipped, saying why, where none can.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{Receiver, channel};
use std::time::{Duration, Instant};

use serde_json::{Value, json};

/// The browser window's width, in CSS pixels (a desktop screen's).
pub const WIDTH: u32 = 1440;

fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|dir| dir.join(name))
        .find(|p| p.is_file())
}

/// The browser: `$DHUMBAL_CHROMIUM`, or Chromium or Chrome on the PATH. `None` (the test is
/// skipped, saying why) only where none is installed and none can be.
pub fn browser() -> Option<PathBuf> {
    if let Some(path) = std::env::var_os("DHUMBAL_CHROMIUM") {
        return Some(PathBuf::from(path));
    }
    let found = [
        "chromium",
        "chromium-browser",
        "google-chrome",
        "google-chrome-stable",
    ]
    .iter()
    .find_map(|name| on_path(name));
    if found.is_some() {
        return found;
    }
    let root = Command::new("id")
        .arg("-u")
        .output()
        .is_ok_and(|o| String::from_utf8_lossy(&o.stdout).trim() == "0");
    if root && on_path("apt-get").is_some() {
        panic!(
            "pages are tested in headless Chromium, which is not installed: \
             `apt-get install -y chromium` (scripts/test.sh installs it), or name a browser \
             in DHUMBAL_CHROMIUM"
        );
    }
    eprintln!(
        "SKIPPED: the pages' browser tests need Chromium (chromium, chromium-browser or \
         google-chrome on the PATH, or DHUMBAL_CHROMIUM), and it cannot be installed here \
         (that takes root and apt-get)"
    );
    None
}

/// One headless browser and one page in it, spoken to through the DevTools protocol.
pub struct Browser {
    child: Child,
    to: ChildStdin,
    from: Receiver<Value>,
    next: u64,
    session: Option<String>,
    log: PathBuf,
}

impl Browser {
    pub fn start(chrome: &Path, dir: &Path) -> Browser {
        let log = dir.join("chromium.log");
        let profile = dir.join("profile");
        // Chromium reads commands on fd 3 and answers on fd 4: our stdin and stdout.
        let mut child = Command::new("sh")
            .arg("-c")
            .arg(
                "exec \"$0\" --headless=new --disable-gpu --no-sandbox --no-first-run \
                 --no-default-browser-check --disable-extensions --hide-scrollbars \
                 --user-data-dir=\"$1\" --remote-debugging-pipe about:blank \
                 3<&0 4>&1 0</dev/null 1>&2",
            )
            .arg(chrome)
            .arg(&profile)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(std::fs::File::create(&log).unwrap())
            .spawn()
            .unwrap_or_else(|e| panic!("cannot start {}: {e}", chrome.display()));
        let to = child.stdin.take().unwrap();
        let mut out = child.stdout.take().unwrap();
        let (send, from) = channel();
        std::thread::spawn(move || {
            let mut buffer = Vec::new();
            let mut chunk = [0u8; 1 << 16];
            while let Ok(n) = out.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                buffer.extend_from_slice(&chunk[..n]);
                while let Some(end) = buffer.iter().position(|&b| b == 0) {
                    let message: Vec<u8> = buffer.drain(..=end).collect();
                    let value = serde_json::from_slice(&message[..end]).unwrap_or(Value::Null);
                    if send.send(value).is_err() {
                        return;
                    }
                }
            }
        });
        Browser {
            child,
            to,
            from,
            next: 0,
            session: None,
            log,
        }
    }

    /// Sends a command (to the page, once attached) and waits for its answer.
    pub fn call(&mut self, method: &str, params: Value) -> Value {
        self.next += 1;
        let id = self.next;
        let mut message = json!({"id": id, "method": method, "params": params});
        if let Some(session) = &self.session {
            message["sessionId"] = json!(session);
        }
        if let Err(e) = self.send(&message) {
            panic!("{method}: the browser is gone ({e}): {}", self.log_tail());
        }
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            let Ok(answer) = self.from.recv_timeout(left) else {
                panic!("{method}: no answer from the browser: {}", self.log_tail());
            };
            if answer["id"] == json!(id) {
                assert!(answer.get("error").is_none(), "{method}: {answer}");
                return answer["result"].clone();
            }
        }
    }

    /// Writes one message to the browser's pipe (JSON, then a NUL).
    fn send(&mut self, message: &Value) -> std::io::Result<()> {
        let mut bytes = message.to_string().into_bytes();
        bytes.push(0);
        self.to.write_all(&bytes)?;
        self.to.flush()
    }

    fn log_tail(&self) -> String {
        let log = std::fs::read_to_string(&self.log).unwrap_or_default();
        let start = log.len().saturating_sub(3000);
        log.get(start..).unwrap_or(&log).to_string()
    }

    /// Opens a page and attaches to it.
    pub fn open(&mut self, url: &str) {
        let target = self.call("Target.createTarget", json!({"url": "about:blank"}));
        let attached = self.call(
            "Target.attachToTarget",
            json!({"targetId": target["targetId"], "flatten": true}),
        );
        self.session = Some(attached["sessionId"].as_str().unwrap().to_string());
        self.resize(WIDTH);
        self.call(
            "Emulation.setFocusEmulationEnabled",
            json!({"enabled": true}),
        );
        self.call("Page.enable", json!({}));
        self.call("Page.navigate", json!({"url": url}));
        let deadline = Instant::now() + Duration::from_secs(30);
        while self.eval("document.body && document.body.dataset.ready || ''") != "1" {
            assert!(
                Instant::now() < deadline,
                "the page did not start: {}",
                self.log_tail()
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    /// Lays the page out `width` pixels wide (and 960 high).
    pub fn resize(&mut self, width: u32) {
        self.call(
            "Emulation.setDeviceMetricsOverride",
            json!({"width": width, "height": 960, "deviceScaleFactor": 1, "mobile": false}),
        );
    }

    /// The value of a JavaScript expression in the page (a script error fails the test).
    pub fn eval(&mut self, expression: &str) -> Value {
        let answer = self.call(
            "Runtime.evaluate",
            json!({"expression": expression, "returnByValue": true}),
        );
        assert!(
            answer.get("exceptionDetails").is_none(),
            "{expression}: {answer}"
        );
        answer["result"]["value"].clone()
    }

    /// The text an element shows (its `innerText`, as laid out).
    pub fn text(&mut self, selector: &str) -> String {
        let v = self.eval(&format!(
            "(document.querySelector({}) || {{}}).innerText || ''",
            json!(selector)
        ));
        v.as_str().unwrap_or_default().to_string()
    }

    pub fn step(&mut self) -> usize {
        self.eval("document.body.dataset.step")
            .as_str()
            .unwrap()
            .parse()
            .unwrap()
    }

    /// Presses and releases a key, as the keyboard would.
    pub fn key(&mut self, key: &str) {
        let code = match key {
            "PageUp" => 33,
            "PageDown" => 34,
            "End" => 35,
            "Home" => 36,
            "ArrowLeft" => 37,
            "ArrowUp" => 38,
            "ArrowRight" => 39,
            "ArrowDown" => 40,
            _ => panic!("no key {key}"),
        };
        for kind in ["rawKeyDown", "keyUp"] {
            self.call(
                "Input.dispatchKeyEvent",
                json!({"type": kind, "key": key, "code": key,
                       "windowsVirtualKeyCode": code, "nativeVirtualKeyCode": code}),
            );
        }
    }

    /// Chooses an option of a `<select>` as a person does: focus it, pick, and it blurs.
    pub fn choose(&mut self, id: &str, value: &str) {
        self.eval(&format!(
            "(() => {{ const s = document.getElementById({}); s.focus(); s.value = {};
                s.dispatchEvent(new Event('change', {{bubbles: true}})); return s.value; }})()",
            json!(id),
            json!(value)
        ));
    }

    /// A PNG of the page as laid out, down to its end.
    pub fn screenshot(&mut self, path: &Path) {
        let height =
            self.eval("Math.ceil(document.documentElement.getBoundingClientRect().height)");
        let clip = json!({"x": 0, "y": 0, "width": WIDTH, "height": height, "scale": 1});
        let shot = self.call(
            "Page.captureScreenshot",
            json!({"format": "png", "clip": clip}),
        );
        std::fs::write(path, base64(shot["data"].as_str().unwrap())).unwrap();
    }
}

impl Drop for Browser {
    /// Asks the browser to close (killed, it leaves its singleton socket's folder in the
    /// system's temporary folder, one per test run), and kills it if it has not within a few
    /// seconds.
    fn drop(&mut self) {
        let close = json!({"id": self.next + 1, "method": "Browser.close"});
        if self.send(&close).is_ok() {
            let deadline = Instant::now() + Duration::from_secs(5);
            while Instant::now() < deadline {
                if let Ok(Some(_)) = self.child.try_wait() {
                    return;
                }
                std::thread::sleep(Duration::from_millis(20));
            }
        }
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Standard base64 (the screenshot's encoding), decoded.
pub fn base64(text: &str) -> Vec<u8> {
    let value = |c: u8| match c {
        b'A'..=b'Z' => c - b'A',
        b'a'..=b'z' => c - b'a' + 26,
        b'0'..=b'9' => c - b'0' + 52,
        b'+' => 62,
        b'/' => 63,
        _ => panic!("not base64: {c}"),
    };
    let digits: Vec<u8> = text.bytes().filter(|&c| c != b'=').map(value).collect();
    let mut out = Vec::with_capacity(digits.len() * 3 / 4);
    for group in digits.chunks(4) {
        let mut bits = 0u32;
        for (i, &d) in group.iter().enumerate() {
            bits |= u32::from(d) << (18 - 6 * i);
        }
        for i in 0..group.len() - 1 {
            out.push((bits >> (16 - 8 * i)) as u8);
        }
    }
    out
}
