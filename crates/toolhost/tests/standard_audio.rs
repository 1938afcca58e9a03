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
    assert_eq!(text_of(&mcp), call.text(), "{args}");
    (call.is_error(), call.text())
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
