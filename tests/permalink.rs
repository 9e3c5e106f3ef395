//! The permalink decoder reads a query exactly as the browser's
//! `URLSearchParams` does, compared in Chromium over a corpus of tricky
//! queries (percent signs before signs, spaces and single digits, `+`,
//! multi-byte text, bytes that are not UTF-8, empty pairs).
#![cfg(all(target_family = "wasm", target_os = "unknown"))]

use wasm_bindgen_test::wasm_bindgen_test as test;
wasm_bindgen_test::wasm_bindgen_test_configure!(run_in_browser);

use replayground::inputs::form_pairs;

/// Pieces queries are built from: the fuzz targets' seeds and what broke before.
const PIECES: &[&str] = &[
    "%",
    "%+",
    "%+41",
    "%+0",
    "%-1",
    "%4",
    "%41",
    "%e2%82%ac",
    "%ff",
    "%C3",
    "%c3%a9",
    "%%",
    "%2B",
    "%20",
    "%00",
    "%0",
    "%g1",
    "%1g",
    "+",
    "++",
    "&",
    "&&",
    "=",
    "==",
    "?",
    "s",
    "tenant",
    "key",
    "schedule",
    "A6B3AB4",
    "é",
    "€",
    "😀",
    " ",
    "#",
    "x",
    "0",
    "9",
    "a",
    "F",
];

fn corpus() -> Vec<String> {
    let mut rng = fastrand::Rng::with_seed(20261130);
    let mut queries: Vec<String> = PIECES.iter().map(|p| p.to_string()).collect();
    for _ in 0..20_000 {
        let n = rng.usize(1..12);
        let mut q = String::new();
        if rng.bool() {
            q.push('?');
        }
        for _ in 0..n {
            q.push_str(PIECES[rng.usize(..PIECES.len())]);
        }
        queries.push(q);
    }
    queries
}

#[test]
fn the_decoder_agrees_with_url_search_params() {
    let mut compared = 0;
    for query in corpus() {
        let browser = web_sys::UrlSearchParams::new_with_str(&query).unwrap();
        let mut expected = Vec::new();
        let entries = js_sys::try_iter(&browser).unwrap().unwrap();
        for entry in entries {
            let pair = js_sys::Array::from(&entry.unwrap());
            expected.push((
                pair.get(0).as_string().unwrap(),
                pair.get(1).as_string().unwrap(),
            ));
        }
        assert_eq!(form_pairs(&query), expected, "query {query:?}");
        compared += 1;
    }
    assert!(compared > 20_000);
}
