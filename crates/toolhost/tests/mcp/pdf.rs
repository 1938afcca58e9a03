//! Documents for the standard tools' tests, made at run time (nothing binary is
//! committed): a text PDF written here (Helvetica, one text line per entry), its pages
//! rendered to PNG or PGM by poppler's `pdftoppm`, and an image-only "scanned" PDF that
//! wraps such a rendering (8-bit gray, uncompressed) with no text layer.
#![allow(dead_code)]

use std::path::Path;
use std::process::Command;

/// A PDF of `objects` (each the body of `N 0 obj`, numbered from 1; object 1 the catalog).
fn assemble(objects: &[Vec<u8>]) -> Vec<u8> {
    let mut out = b"%PDF-1.4\n%\xe2\xe3\xcf\xd3\n".to_vec();
    let mut offsets = Vec::new();
    for (i, body) in objects.iter().enumerate() {
        offsets.push(out.len());
        out.extend_from_slice(format!("{} 0 obj\n", i + 1).as_bytes());
        out.extend_from_slice(body);
        out.extend_from_slice(b"\nendobj\n");
    }
    let xref = out.len();
    out.extend_from_slice(
        format!("xref\n0 {}\n0000000000 65535 f \n", objects.len() + 1).as_bytes(),
    );
    for off in offsets {
        out.extend_from_slice(format!("{off:010} 00000 n \n").as_bytes());
    }
    out.extend_from_slice(
        format!(
            "trailer\n<< /Size {} /Root 1 0 R >>\nstartxref\n{xref}\n%%EOF\n",
            objects.len() + 1
        )
        .as_bytes(),
    );
    out
}

fn escape(text: &str) -> String {
    text.replace('\\', "\\\\")
        .replace('(', "\\(")
        .replace(')', "\\)")
}

/// A US-letter PDF with one page per entry of `pages`, each line of it in 20 pt Helvetica
/// (ASCII only).
pub fn text_pdf(pages: &[&[&str]]) -> Vec<u8> {
    let n = pages.len();
    // 1 catalog, 2 pages, 3 font, then per page: page, contents.
    let kids: Vec<String> = (0..n).map(|i| format!("{} 0 R", 4 + 2 * i)).collect();
    let mut objects = vec![
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        format!("<< /Type /Pages /Kids [{}] /Count {n} >>", kids.join(" ")).into_bytes(),
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica /Encoding /WinAnsiEncoding >>"
            .to_vec(),
    ];
    for (i, lines) in pages.iter().enumerate() {
        let mut stream = String::from("BT /F1 20 Tf 72 700 Td 28 TL\n");
        for line in *lines {
            stream.push_str(&format!("({}) Tj T*\n", escape(line)));
        }
        stream.push_str("ET");
        objects.push(
            format!(
                "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] \
                 /Resources << /Font << /F1 3 0 R >> >> /Contents {} 0 R >>",
                5 + 2 * i
            )
            .into_bytes(),
        );
        let mut contents = format!("<< /Length {} >>\nstream\n", stream.len()).into_bytes();
        contents.extend_from_slice(stream.as_bytes());
        contents.extend_from_slice(b"\nendstream");
        objects.push(contents);
    }
    assemble(&objects)
}

/// A one-page PDF holding only the 8-bit gray image `pixels` (`width` × `height`), shown
/// at `dpi`: a scan, with no text layer.
pub fn image_pdf(width: usize, height: usize, pixels: &[u8], dpi: usize) -> Vec<u8> {
    assert_eq!(pixels.len(), width * height);
    let (w, h) = (width * 72 / dpi, height * 72 / dpi);
    let draw = format!("q {w} 0 0 {h} 0 0 cm /Im1 Do Q");
    let mut image = format!(
        "<< /Type /XObject /Subtype /Image /Width {width} /Height {height} \
         /ColorSpace /DeviceGray /BitsPerComponent 8 /Length {} >>\nstream\n",
        pixels.len()
    )
    .into_bytes();
    image.extend_from_slice(pixels);
    image.extend_from_slice(b"\nendstream");
    let mut contents = format!("<< /Length {} >>\nstream\n", draw.len()).into_bytes();
    contents.extend_from_slice(draw.as_bytes());
    contents.extend_from_slice(b"\nendstream");
    assemble(&[
        b"<< /Type /Catalog /Pages 2 0 R >>".to_vec(),
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>".to_vec(),
        format!(
            "<< /Type /Page /Parent 2 0 R /MediaBox [0 0 {w} {h}] \
             /Resources << /XObject << /Im1 4 0 R >> >> /Contents 5 0 R >>"
        )
        .into_bytes(),
        image,
        contents,
    ])
}

fn pdftoppm(pdf: &Path, args: &[&str], out_prefix: &Path) {
    crate::machine::program("pdftoppm", "poppler-utils");
    let out = Command::new("pdftoppm")
        .args(args)
        .args(["-f", "1", "-l", "1", "-singlefile"])
        .arg(pdf)
        .arg(out_prefix)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "pdftoppm: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The first page of `pdf` as a PNG at `dpi`, written to `png`.
pub fn render_png(pdf: &Path, dpi: u32, png: &Path) {
    let prefix = png.with_extension("");
    pdftoppm(pdf, &["-png", "-r", &dpi.to_string()], &prefix);
    let made = prefix.with_extension("png");
    if made != png {
        std::fs::rename(made, png).unwrap();
    }
}

/// A scanned PDF of `lines`: the text PDF rendered to gray pixels at `dpi`, wrapped
/// into a PDF with no text.
pub fn scanned_pdf(lines: &[&str], dpi: usize, dir: &Path) -> Vec<u8> {
    std::fs::create_dir_all(dir).unwrap();
    let text = dir.join("scan-source.pdf");
    std::fs::write(&text, text_pdf(&[lines])).unwrap();
    let prefix = dir.join("scan-source");
    pdftoppm(&text, &["-gray", "-r", &dpi.to_string()], &prefix);
    let pgm = std::fs::read(prefix.with_extension("pgm")).unwrap();
    std::fs::remove_file(&text).unwrap();
    std::fs::remove_file(prefix.with_extension("pgm")).unwrap();
    // P5\n<w> <h>\n255\n<pixels>
    let mut fields = Vec::new();
    let mut at = 0;
    while fields.len() < 4 {
        while pgm[at].is_ascii_whitespace() {
            at += 1;
        }
        let start = at;
        while !pgm[at].is_ascii_whitespace() {
            at += 1;
        }
        fields.push(String::from_utf8(pgm[start..at].to_vec()).unwrap());
    }
    assert_eq!(fields[0], "P5");
    assert_eq!(fields[3], "255");
    let (w, h): (usize, usize) = (fields[1].parse().unwrap(), fields[2].parse().unwrap());
    image_pdf(w, h, &pgm[at + 1..], dpi)
}

/// Standard base64 of `bytes`: what a data URL holds.
pub fn base64(bytes: &[u8]) -> String {
    const ABC: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::new();
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            *chunk.get(1).unwrap_or(&0),
            *chunk.get(2).unwrap_or(&0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(ABC[(n >> (18 - 6 * i)) as usize & 63] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}
