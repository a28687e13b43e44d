//! A minimal XML reader for tests: elements, double- or single-quoted attributes,
//! text with the five predefined entities, an optional declaration. It rejects
//! anything it does not understand, so "parses" means "well-formed in this subset".

use std::collections::BTreeMap;

#[derive(Debug, Clone, PartialEq)]
pub struct Element {
    pub name: String,
    pub attrs: BTreeMap<String, String>,
    pub children: Vec<Element>,
    pub text: String,
}

impl Element {
    pub fn attr(&self, name: &str) -> &str {
        self.attrs
            .get(name)
            .unwrap_or_else(|| panic!("<{}> has no attribute {name}", self.name))
    }

    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> {
        self.children.iter().filter(move |c| c.name == name)
    }
}

pub fn parse(input: &str) -> Result<Element, String> {
    let mut rest = input.trim_start();
    if let Some(after) = rest.strip_prefix("<?xml") {
        let end = after.find("?>").ok_or("unterminated declaration")?;
        rest = after[end + 2..].trim_start();
    }
    let (root, rest) = element(rest)?;
    if !rest.trim().is_empty() {
        return Err(format!("content after the root element: {:?}", rest.trim()));
    }
    Ok(root)
}

fn element(input: &str) -> Result<(Element, &str), String> {
    let input = input.strip_prefix('<').ok_or("expected '<'")?;
    let name_end = input
        .find(|c: char| c.is_whitespace() || c == '>' || c == '/')
        .ok_or("unterminated start tag")?;
    let name = &input[..name_end];
    if name.is_empty() {
        return Err("empty element name".into());
    }
    let mut el = Element {
        name: name.to_string(),
        attrs: BTreeMap::new(),
        children: Vec::new(),
        text: String::new(),
    };
    let mut rest = &input[name_end..];
    loop {
        rest = rest.trim_start();
        if let Some(r) = rest.strip_prefix("/>") {
            return Ok((el, r));
        }
        if let Some(r) = rest.strip_prefix('>') {
            rest = r;
            break;
        }
        let eq = rest.find('=').ok_or("attribute without '='")?;
        let key = rest[..eq].trim().to_string();
        let after = &rest[eq + 1..];
        let quote = after.chars().next().ok_or("attribute without value")?;
        if quote != '"' && quote != '\'' {
            return Err(format!("unquoted attribute {key}"));
        }
        let close = after[1..].find(quote).ok_or("unterminated attribute")?;
        let value = unescape(&after[1..1 + close])?;
        if el.attrs.insert(key.clone(), value).is_some() {
            return Err(format!("duplicate attribute {key}"));
        }
        rest = &after[close + 2..];
    }
    loop {
        let lt = rest.find('<').ok_or(format!("<{name}> is never closed"))?;
        el.text.push_str(&unescape(&rest[..lt])?);
        rest = &rest[lt..];
        if let Some(r) = rest.strip_prefix("</") {
            let gt = r.find('>').ok_or("unterminated end tag")?;
            if r[..gt].trim() != name {
                return Err(format!("<{name}> closed by </{}>", &r[..gt]));
            }
            return Ok((el, &r[gt + 1..]));
        }
        let (child, r) = element(rest)?;
        el.children.push(child);
        rest = r;
    }
}

fn unescape(s: &str) -> Result<String, String> {
    if s.contains('<') {
        return Err(format!("raw markup character in {s:?}"));
    }
    let mut out = String::new();
    let mut rest = s;
    while let Some(amp) = rest.find('&') {
        out.push_str(&rest[..amp]);
        let semi = rest[amp..].find(';').ok_or("unterminated entity")?;
        let entity = &rest[amp + 1..amp + semi];
        out.push(match entity {
            "lt" => '<',
            "gt" => '>',
            "amp" => '&',
            "quot" => '"',
            "apos" => '\'',
            _ => return Err(format!("unknown entity &{entity};")),
        });
        rest = &rest[amp + semi + 1..];
    }
    out.push_str(rest);
    Ok(out)
}
