//! The standard tools `convert_audio_to_mp3` and `ffmpeg` (`seed/tools/`), through
//! `toolhost call` and `toolhost mcp`, in the sandbox, with the real ffmpeg and ffprobe on
//! clips made at run time (`-f lavfi`: a sine tone as WAV, FLAC and OGG, a test-pattern
//! video with sound, one without). Conversions are checked with ffprobe on the host;
//! cancelling a call (MCP `notifications/cancelled`) and timeouts must leave no ffmpeg
//! running.
#![allow(clippy::unwrap_used)]

#[path = "mcp/common.rs"]
mod common;
#[path = "mcp/line_client.rs"]
mod line_client;
mod machine;
#[path = "mcp/standard.rs"]
mod standard;

use std::path::Path;
use std::process::Command;
use std::time::{Duration, Instant};

use line_client::LineClient;
use serde_json::{Value, json};
use standard::{Officer, text_of};

fn programs() {
    machine::program("ffmpeg", "ffmpeg");
    machine::program("ffprobe", "ffmpeg");
}

/// Runs ffmpeg on the host (fixtures), quietly, failing the test if it fails.
fn ffmpeg(args: &[&str]) {
    let out = Command::new("ffmpeg")
        .args(["-hide_banner", "-loglevel", "error", "-nostdin", "-y"])
        .args(args)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "ffmpeg {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// ffprobe's JSON (format and streams) of `file`, on the host.
fn probe(file: &Path) -> Value {
    let out = Command::new("ffprobe")
        .args([
            "-v",
            "error",
            "-print_format",
            "json",
            "-show_format",
            "-show_streams",
        ])
        .arg(file)
        .output()
        .unwrap();
    assert!(out.status.success(), "ffprobe {}", file.display());
    serde_json::from_slice(&out.stdout).unwrap()
}

/// Calls through `toolhost call` and through `toolhost mcp`; both must give the same.
fn both(o: &Officer, tool: &str, args: Value) -> (bool, String) {
    let call = o.call(tool, args.clone());
    assert_eq!(call.code, i32::from(call.is_error()), "{}", call.stderr);
    let mcp = o.mcp_call(tool, args.clone());
    assert_eq!(
        mcp["isError"] == true,
        call.is_error(),
        "{args}: {} / {mcp}",
        call.text()
    );
    assert_eq!(untimed(&text_of(&mcp)), untimed(&call.text()), "{args}");
    (call.is_error(), call.text())
}

/// `text` without the run times (`after 0.3 s`) and ffmpeg's log (its speed), which differ
/// between two runs.
fn untimed(text: &str) -> String {
    let text = text
        .split("\nLog (standard error, end):")
        .next()
        .unwrap_or_default();
    let mut out = String::new();
    let mut rest = text;
    while let Some(i) = rest.find("after ") {
        out.push_str(&rest[..i + 6]);
        rest = &rest[i + 6..];
        let digits = rest
            .find(|c: char| !c.is_ascii_digit() && c != '.')
            .unwrap_or(rest.len());
        if digits > 0 && rest[digits..].starts_with(" s") {
            out.push('N');
            rest = &rest[digits..];
        }
    }
    out.push_str(rest);
    out
}

fn ok(o: &Officer, tool: &str, args: Value) -> String {
    let (is_error, text) = both(o, tool, args.clone());
    assert!(!is_error, "{args}: {text}");
    text
}

fn fails(o: &Officer, tool: &str, args: Value) -> String {
    let (is_error, text) = both(o, tool, args.clone());
    assert!(is_error, "{args} should fail: {text}");
    text
}

/// A data folder whose home holds `media/`: tone.wav (3 s, 440 Hz, mono), tone.flac
/// (stereo), tone.ogg (Vorbis), clip.mkv (2 s of test pattern with a tone), silent.mkv
/// (picture only) and notes.txt.
fn media(config: &str) -> Officer {
    programs();
    let o = Officer::new(config);
    let m = o.home().join("media");
    std::fs::create_dir_all(&m).unwrap();
    let p = |name: &str| m.join(name).to_str().unwrap().to_string();
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=440:duration=3",
        &p("tone.wav"),
    ]);
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=440:duration=3",
        "-ac",
        "2",
        &p("tone.flac"),
    ]);
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=660:duration=3",
        "-c:a",
        "libvorbis",
        &p("tone.ogg"),
    ]);
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=duration=2:size=160x120:rate=10",
        "-f",
        "lavfi",
        "-i",
        "sine=frequency=300:duration=2",
        "-c:v",
        "mpeg4",
        "-c:a",
        "flac",
        "-shortest",
        &p("clip.mkv"),
    ]);
    ffmpeg(&[
        "-f",
        "lavfi",
        "-i",
        "testsrc=duration=2:size=160x120:rate=10",
        "-c:v",
        "mpeg4",
        &p("silent.mkv"),
    ]);
    std::fs::write(
        m.join("notes.txt"),
        "just some text, not audio\n".repeat(50),
    )
    .unwrap();
    o
}

fn audio_stream(info: &Value) -> &Value {
    info["streams"]
        .as_array()
        .unwrap()
        .iter()
        .find(|s| s["codec_type"] == "audio")
        .expect("no audio stream")
}

fn assert_mp3(file: &Path, seconds: f64, channels: u64) -> Value {
    let info = probe(file);
    assert_eq!(info["format"]["format_name"], "mp3", "{info}");
    let a = audio_stream(&info).clone();
    assert_eq!(a["codec_name"], "mp3", "{info}");
    assert_eq!(a["channels"], channels, "{info}");
    let d: f64 = info["format"]["duration"]
        .as_str()
        .unwrap()
        .parse()
        .unwrap();
    assert!((d - seconds).abs() < 0.15, "duration {d}, wanted {seconds}");
    a
}

#[test]
fn convert_audio_to_mp3_converts_audio_and_video_sound() {
    let o = media("");
    let m = o.home().join("media");

    // WAV, default name beside the input and default bitrate; progress is reported.
    let call = o.call(
        "convert_audio_to_mp3",
        json!({"input_path": "media/tone.wav"}),
    );
    assert!(!call.is_error(), "{}", call.text());
    assert!(
        call.text().starts_with(
            "Converted /officer/user/media/tone.wav to /officer/user/media/tone.mp3: 0:03.0"
        ),
        "{}",
        call.text()
    );
    assert!(
        call.text().contains("192 kb/s, 44100 Hz, mono"),
        "{}",
        call.text()
    );
    assert!(
        call.stderr.contains("progress: Converting tone.wav"),
        "{}",
        call.stderr
    );
    let a = assert_mp3(&m.join("tone.mp3"), 3.0, 1);
    assert_eq!(a["bit_rate"], "192000");
    // No temporary file is left behind.
    let names: Vec<String> = std::fs::read_dir(&m)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    assert!(!names.iter().any(|n| n.ends_with(".part")), "{names:?}");

    // The same again: refused without overwrite, through call and mcp alike.
    let text = fails(
        &o,
        "convert_audio_to_mp3",
        json!({"input_path": "media/tone.wav"}),
    );
    assert!(
        text.contains("/officer/user/media/tone.mp3 already exists: pass overwrite: true"),
        "{text}"
    );
    ok(
        &o,
        "convert_audio_to_mp3",
        json!({"input_path": "media/tone.wav", "overwrite": true, "bitrate": "96k"}),
    );
    assert_eq!(assert_mp3(&m.join("tone.mp3"), 3.0, 1)["bit_rate"], "96000");

    // FLAC (stereo) to mono at 64k, to a new folder; an absolute input path.
    let text = ok(
        &o,
        "convert_audio_to_mp3",
        json!({"input_path": "/officer/user/media/tone.flac", "output_path": "out/from-flac",
               "bitrate": "64k", "mono": true, "overwrite": true}),
    );
    assert!(
        text.contains("to /officer/user/out/from-flac.mp3") && text.contains("64 kb/s"),
        "{text}"
    );
    assert_mp3(&o.home().join("out/from-flac.mp3"), 3.0, 1);

    // OGG Vorbis, resampled.
    let text = ok(
        &o,
        "convert_audio_to_mp3",
        json!({"input_path": "media/tone.ogg", "sample_rate": 22050, "overwrite": true}),
    );
    assert!(text.contains("22050 Hz"), "{text}");
    assert_eq!(
        assert_mp3(&m.join("tone.mp3"), 3.0, 1)["sample_rate"],
        "22050"
    );

    // A video's sound track; the picture is dropped.
    let text = ok(
        &o,
        "convert_audio_to_mp3",
        json!({"input_path": "media/clip.mkv", "overwrite": true}),
    );
    assert!(text.contains("/officer/user/media/clip.mp3"), "{text}");
    let info = probe(&m.join("clip.mp3"));
    assert_eq!(info["streams"].as_array().unwrap().len(), 1, "{info}");
    assert_mp3(&m.join("clip.mp3"), 2.0, 1);

    // Failures the model can act on.
    let text = fails(
        &o,
        "convert_audio_to_mp3",
        json!({"input_path": "media/silent.mkv"}),
    );
    assert!(
        text.contains("silent.mkv has no audio stream") && text.contains("video (mpeg4)"),
        "{text}"
    );
    let text = fails(
        &o,
        "convert_audio_to_mp3",
        json!({"input_path": "media/notes.txt"}),
    );
    assert!(
        text.contains("notes.txt is not an audio or video file ffprobe can read"),
        "{text}"
    );
    let text = fails(
        &o,
        "convert_audio_to_mp3",
        json!({"input_path": "media/nope.wav"}),
    );
    assert!(
        text.contains("No such file: /officer/user/media/nope.wav"),
        "{text}"
    );
    let text = fails(
        &o,
        "convert_audio_to_mp3",
        json!({"input_path": "media/tone.wav", "sample_rate": 12345}),
    );
    assert!(text.contains("not an MP3 rate"), "{text}");
    assert!(!m.join("notes.mp3").exists() && !m.join("silent.mp3").exists());
}

#[test]
fn a_machine_without_ffmpeg_gets_the_package_name() {
    programs();
    // The tools' PATH is theirs to read: an empty one is a machine without ffmpeg.
    let o = Officer::new("[env]\nPATH = \"/nonexistent\"\n");
    std::fs::write(o.home().join("a.wav"), b"RIFF").unwrap();
    for (tool, args) in [
        ("convert_audio_to_mp3", json!({"input_path": "a.wav"})),
        ("ffmpeg", json!({"args": "-i a.wav a.mp3"})),
    ] {
        let text = fails(&o, tool, args);
        assert!(
            text.contains("ffmpeg is not installed") && text.contains("Debian package `ffmpeg`"),
            "{text}"
        );
    }
}

/// Processes on this machine (the sandbox's included) whose command line holds `marker`.
fn running(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let name = entry.file_name().to_string_lossy().into_owned();
        if !name.bytes().all(|b| b.is_ascii_digit()) {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        if cmdline.contains(marker) && cmdline.contains("ffmpeg") {
            found.push(format!("{name}: {cmdline}"));
        }
    }
    found
}

fn wait_for(what: &str, secs: u64, mut done: impl FnMut() -> bool) {
    let until = Instant::now() + Duration::from_secs(secs);
    while !done() {
        assert!(Instant::now() < until, "{what} within {secs} s");
        std::thread::sleep(Duration::from_millis(50));
    }
}

#[test]
fn ffmpeg_probes_trims_transcodes_and_grabs_frames() {
    let o = media("");
    let m = o.home().join("media");

    // ffprobe: its JSON comes back; nothing is created.
    let text = ok(
        &o,
        "ffmpeg",
        json!({"program": "ffprobe",
               "args": r#"["-v", "error", "-print_format", "json", "-show_format", "-show_streams", "media/clip.mkv"]"#}),
    );
    assert!(
        text.starts_with("$ ffprobe -hide_banner -v error -print_format json -show_format -show_streams media/clip.mkv\n(in /officer/user)\nffprobe exited with status 0"),
        "{text}"
    );
    let json_start = text.find("Standard output:\n").unwrap() + 17;
    let json_end = text[json_start..].find("\n}").unwrap() + json_start + 2;
    let probed: Value = serde_json::from_str(&text[json_start..json_end]).unwrap();
    assert_eq!(probed["format"]["format_name"], "matroska,webm");
    assert_eq!(probed["streams"].as_array().unwrap().len(), 2);

    // A command line with a quoted name, in cwd; progress while it runs; the new file listed.
    let args = json!({"args": "-y -i clip.mkv -t 1 -vn -c:a libmp3lame -b:a 64k 'short clip.mp3'",
                      "cwd": "media"});
    let call = o.call("ffmpeg", args.clone());
    assert!(!call.is_error(), "{}", call.text());
    let text = call.text();
    assert!(
        text.starts_with("$ ffmpeg -hide_banner -nostdin -progress pipe:1 -nostats -y -i clip.mkv -t 1 -vn -c:a libmp3lame -b:a 64k 'short clip.mp3'\n(in /officer/user/media)\nffmpeg exited with status 0"),
        "{text}"
    );
    assert!(
        text.contains("Files created or changed:\n  short clip.mp3 ("),
        "{text}"
    );
    assert!(text.contains("Log (standard error, end):"), "{text}");
    assert!(
        call.stderr.contains("progress: ffmpeg: "),
        "{}",
        call.stderr
    );
    assert_mp3(&m.join("short clip.mp3"), 1.0, 1);
    ok(&o, "ffmpeg", args);

    // A frame as PNG, arguments as JSON.
    let text = ok(
        &o,
        "ffmpeg",
        json!({"args": r#"["-y", "-ss", "1", "-i", "media/clip.mkv", "-frames:v", "1", "media/frame.png"]"#}),
    );
    assert!(text.contains("  media/frame.png ("), "{text}");
    assert!(
        std::fs::read(m.join("frame.png"))
            .unwrap()
            .starts_with(b"\x89PNG")
    );

    // Failures: ffmpeg's own reason, shell syntax, writing outside the home.
    let text = fails(
        &o,
        "ffmpeg",
        json!({"args": "-i media/tone.wav -c:a nosuchcodec media/x.mp3"}),
    );
    assert!(
        text.contains("ffmpeg exited with status 1")
            && text.contains("Unknown encoder 'nosuchcodec'"),
        "{text}"
    );
    let text = fails(
        &o,
        "ffmpeg",
        json!({"args": "-i media/tone.wav -f wav - | lame - out.mp3"}),
    );
    assert!(
        text.contains("args holds \"|\"") && text.contains("no shell"),
        "{text}"
    );
    let text = fails(
        &o,
        "ffmpeg",
        json!({"args": "-y -i media/tone.wav /etc/tone.mp3"}),
    );
    assert!(
        text.contains("/etc/tone.mp3: Read-only file system"),
        "{text}"
    );
    let text = fails(&o, "ffmpeg", json!({"args": "-i 'unclosed"}));
    assert!(text.contains("single quote is not closed"), "{text}");
    let text = fails(&o, "ffmpeg", json!({"args": "-i x.wav", "cwd": "nowhere"}));
    assert!(
        text.contains("cwd /officer/user/nowhere is not a folder"),
        "{text}"
    );
}

#[test]
fn timeouts_and_cancellation_stop_ffmpeg() {
    programs();
    // A grace longer than the wait below: if ffmpeg stops within it, the tool stopped it,
    // not the runtime killing the worker (`toolhost mcp` exits a grace after a cancel).
    let o = Officer::new("[runtime]\ncancel_grace = 7000\n");

    // timeout_ms: a real-time encode of a minute is stopped after 1.5 s.
    let marker = "timeout-8d1e2f";
    let started = Instant::now();
    let call = o.call(
        "ffmpeg",
        json!({"args": format!("-re -f lavfi -i sine=duration=60 {marker}.mp3"), "timeout_ms": 1500}),
    );
    assert!(call.is_error(), "{}", call.text());
    assert!(
        call.text()
            .contains("ffmpeg took longer than 1.5 s (timeout_ms) and was stopped"),
        "{}",
        call.text()
    );
    assert!(started.elapsed() < Duration::from_secs(20));
    assert!(running(marker).is_empty(), "{:?}", running(marker));

    // MCP cancellation: the session goes on, ffmpeg is gone at once.
    let marker = "cancel-5c7a91";
    let mut client = LineClient::start(o.toolhost("mcp"));
    client.initialize("2025-11-25");
    client.tell(json!({"jsonrpc": "2.0", "id": 7, "method": "tools/call",
        "params": {"name": "ffmpeg",
                   "arguments": {"args": format!("-re -f lavfi -i sine=duration=120 {marker}.mp3")}}}));
    wait_for("ffmpeg starts", 30, || !running(marker).is_empty());
    std::thread::sleep(Duration::from_millis(500));
    client.tell(
        json!({"jsonrpc": "2.0", "method": "notifications/cancelled",
        "params": {"requestId": 7, "reason": "the test cancels"}}),
    );
    wait_for("ffmpeg is stopped", 3, || running(marker).is_empty());
    // The session still answers.
    let answer = client.ask(json!({"jsonrpc": "2.0", "id": 8, "method": "ping"}));
    assert!(answer["id"] == 8 || answer["id"] == 7, "{answer}");
    client.close();
    assert!(running(marker).is_empty());
}
