//! The README's "Adding a family" block shows the family contract as
//! `ops-core/src/family/mod.rs` declares it. The block cannot compile
//! as a doctest (the README is the `ops` crate's page, which does not
//! depend on `ops-spec`), so this test keeps it from drifting: every
//! declaration it shows is in the source, and every method a family must
//! write is in the block.

/// `s` without comments and whitespace, and without the trailing comma
/// rustfmt puts after the last parameter of a long signature.
fn squeeze(s: &str) -> String {
    let code: String = s
        .lines()
        .map(|l| l.split("//").next().unwrap_or(""))
        .collect();
    code.split_whitespace()
        .collect::<String>()
        .replace(",)", ")")
}

/// The trait declarations and method signatures of `code` (squeezed):
/// each `pub trait X: Bound` and each `fn ...;` or `fn ...{`.
fn declarations(code: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut rest = code;
    while let Some(i) = rest
        .find("pubtrait")
        .into_iter()
        .chain(rest.find("fn"))
        .min()
    {
        let item = &rest[i..];
        let end = item.find(['{', ';']).unwrap_or(item.len());
        out.push(item[..end].to_string());
        rest = &item[end.min(item.len() - 1) + 1..];
    }
    out
}

#[test]
fn the_readme_shows_the_family_contract_as_declared() {
    let readme = include_str!("../../README.md");
    let section = &readme[readme.find("## Adding a family").expect("the section")..];
    let start = section.find("```text\n").expect("the block") + "```text\n".len();
    let block = &section[start..start + section[start..].find("```").expect("its end")];
    let source = include_str!("../../ops-core/src/family/mod.rs");
    let traits_start = source.find("pub trait Family").expect("trait Family");
    let traits_end = traits_start
        + source[traits_start..]
            .find("\n}\n")
            .expect("the trait's end");
    let declared = squeeze(&source[traits_start..traits_end]);
    let shown = declarations(&squeeze(block));
    assert!(shown.len() >= 9, "the block shows {shown:?}");
    for d in &shown {
        assert!(
            declared.contains(d.as_str()),
            "the README shows `{d}`, the source has no such declaration"
        );
    }
    // Methods without a default body: a family writes them all.
    for d in declarations(&declared) {
        let required = declared.contains(&format!("{d};"));
        if required {
            assert!(shown.contains(&d), "the README does not show `{d}`");
        }
    }
}
