//! fio's arithmetic in `(...)`: `size=(1024*8)k`, `runtime=(2*60)s`.
//!
//! Mirrors fio's exp/expression-parser grammar: `+ - * / % ^`, unary minus, parentheses, and
//! unit suffixes that bind tighter than any operator. Inside an expression the suffixes are
//! fixed (they do not follow `kb_base`): k/kb = 1024, m/mb = 1024², g, t, p likewise; kib = 1000,
//! mib = 10⁶, gib = 10⁹, pib = 10¹² (fio has no `tib` here); us = 1, ms = 1000, s = 10⁶,
//! h and d in microseconds, so a bare number in a time expression is microseconds. Integers stay
//! integers until a decimal point appears, as in fio.

/// The value of an expression: fio keeps an integer and a floating view side by side.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Num {
    /// Integer view (what integer options store).
    pub int: i64,
    /// Floating view (what float options store).
    pub float: f64,
    has_float: bool,
}

impl Num {
    fn int(v: i64) -> Self {
        Num {
            int: v,
            float: v as f64,
            has_float: false,
        }
    }
    fn float(v: f64) -> Self {
        Num {
            int: v as i64,
            float: v,
            has_float: true,
        }
    }
}

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Num(Num),
    Suffix(Num),
    Op(char),
}

fn suffix(word: &str) -> Option<Num> {
    const K: i64 = 1024;
    let v = match word.to_ascii_lowercase().as_str() {
        "k" | "kb" => K,
        "m" | "mb" => K * K,
        "g" | "gb" => K * K * K,
        "t" | "tb" => K * K * K * K,
        "p" | "pb" => K * K * K * K * K,
        "kib" => 1000,
        "mib" => 1_000_000,
        "gib" => 1_000_000_000,
        "pib" => 1_000_000_000_000,
        "us" => 1,
        "ms" => 1000,
        "s" => 1_000_000,
        "h" => 3_600_000_000,
        "d" => 86_400_000_000,
        _ => return None,
    };
    Some(Num::int(v))
}

fn lex(s: &str) -> Result<Vec<Tok>, String> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        if c == b' ' || c == b'\t' {
            i += 1;
        } else if c == b'0' && i + 1 < b.len() && (b[i + 1] == b'x' || b[i + 1] == b'X') {
            let start = i + 2;
            let mut j = start;
            while j < b.len() && b[j].is_ascii_hexdigit() {
                j += 1;
            }
            let v = i64::from_str_radix(&s[start..j], 16)
                .map_err(|_| format!("bad number '{}'", &s[i..j]))?;
            out.push(Tok::Num(Num::int(v)));
            i = j;
        } else if c.is_ascii_digit() || c == b'.' {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_digit() {
                j += 1;
            }
            if j < b.len() && b[j] == b'.' {
                j += 1;
                let frac = j;
                while j < b.len() && b[j].is_ascii_digit() {
                    j += 1;
                }
                if frac == j {
                    return Err(format!("bad number '{}'", &s[i..j]));
                }
                let v: f64 = s[i..j]
                    .parse()
                    .map_err(|_| format!("bad number '{}'", &s[i..j]))?;
                out.push(Tok::Num(Num::float(v)));
            } else {
                let v: i64 = s[i..j]
                    .parse()
                    .map_err(|_| format!("bad number '{}'", &s[i..j]))?;
                out.push(Tok::Num(Num::int(v)));
            }
            i = j;
        } else if c.is_ascii_alphabetic() {
            let mut j = i;
            while j < b.len() && b[j].is_ascii_alphabetic() {
                j += 1;
            }
            let word = &s[i..j];
            let n = suffix(word).ok_or_else(|| format!("unknown unit '{word}'"))?;
            out.push(Tok::Suffix(n));
            i = j;
        } else if b"+-*/%^()".contains(&c) {
            out.push(Tok::Op(c as char));
            i += 1;
        } else {
            return Err(format!("unexpected character '{}'", c as char));
        }
    }
    Ok(out)
}

struct Parser {
    toks: Vec<Tok>,
    pos: usize,
}

fn bin(op: char, a: Num, b: Num) -> Result<Num, String> {
    let float = a.has_float || b.has_float;
    Ok(match op {
        '+' if float => Num::float(a.float + b.float),
        '+' => Num::int(a.int.checked_add(b.int).ok_or("overflow")?),
        '-' if float => Num::float(a.float - b.float),
        '-' => Num::int(a.int.checked_sub(b.int).ok_or("overflow")?),
        '*' if float => Num::float(a.float * b.float),
        '*' => Num::int(a.int.checked_mul(b.int).ok_or("overflow")?),
        '/' => {
            if b.float.abs() < 1e-20 {
                return Err("divide by zero".into());
            }
            if float {
                Num::float(a.float / b.float)
            } else {
                Num::int(a.int / b.int)
            }
        }
        '%' => {
            if float {
                return Err("modulo on floats".into());
            }
            if b.int == 0 {
                return Err("divide by zero".into());
            }
            Num::int(a.int % b.int)
        }
        '^' => {
            if !float && b.int >= 0 {
                let e = u32::try_from(b.int).map_err(|_| "overflow")?;
                Num::int(a.int.checked_pow(e).ok_or("overflow")?)
            } else {
                let v = a.float.powf(b.float);
                Num {
                    int: v as i64,
                    float: v,
                    has_float: float,
                }
            }
        }
        _ => return Err(format!("unknown operator '{op}'")),
    })
}

impl Parser {
    fn peek_op(&self) -> Option<char> {
        match self.toks.get(self.pos) {
            Some(Tok::Op(c)) => Some(*c),
            _ => None,
        }
    }
    // Precedence, lowest first, as fio's grammar declares it: + - < * / < ^ (right) < % < unary.
    fn expr(&mut self) -> Result<Num, String> {
        let mut v = self.term()?;
        while let Some(op @ ('+' | '-')) = self.peek_op() {
            self.pos += 1;
            let r = self.term()?;
            v = bin(op, v, r)?;
        }
        Ok(v)
    }
    fn term(&mut self) -> Result<Num, String> {
        let mut v = self.power()?;
        while let Some(op @ ('*' | '/')) = self.peek_op() {
            self.pos += 1;
            let r = self.power()?;
            v = bin(op, v, r)?;
        }
        Ok(v)
    }
    fn power(&mut self) -> Result<Num, String> {
        let base = self.modulo()?;
        if self.peek_op() == Some('^') {
            self.pos += 1;
            let e = self.power()?;
            return bin('^', base, e);
        }
        Ok(base)
    }
    fn modulo(&mut self) -> Result<Num, String> {
        let mut v = self.unary()?;
        while self.peek_op() == Some('%') {
            self.pos += 1;
            let r = self.unary()?;
            v = bin('%', v, r)?;
        }
        Ok(v)
    }
    fn unary(&mut self) -> Result<Num, String> {
        if self.peek_op() == Some('-') {
            self.pos += 1;
            let v = self.unary()?;
            return Ok(Num {
                int: -v.int,
                float: -v.float,
                has_float: v.has_float,
            });
        }
        self.postfix()
    }
    fn postfix(&mut self) -> Result<Num, String> {
        let mut v = self.primary()?;
        while let Some(Tok::Suffix(m)) = self.toks.get(self.pos) {
            let m = *m;
            self.pos += 1;
            v = bin('*', v, m)?;
        }
        Ok(v)
    }
    fn primary(&mut self) -> Result<Num, String> {
        match self.toks.get(self.pos).cloned() {
            Some(Tok::Num(n)) => {
                self.pos += 1;
                Ok(n)
            }
            Some(Tok::Op('(')) => {
                self.pos += 1;
                let v = self.expr()?;
                if self.peek_op() != Some(')') {
                    return Err("missing ')'".into());
                }
                self.pos += 1;
                Ok(v)
            }
            Some(t) => Err(format!("unexpected {t:?}")),
            None => Err("unexpected end of expression".into()),
        }
    }
}

/// Evaluates an arithmetic expression such as `(1024*8)k`.
pub fn eval(s: &str) -> Result<Num, String> {
    let toks = lex(s)?;
    let mut p = Parser { toks, pos: 0 };
    let v = p.expr()?;
    if p.pos != p.toks.len() {
        return Err(format!("trailing input in expression '{s}'"));
    }
    Ok(v)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn i(s: &str) -> i64 {
        eval(s)
            .map(|n| n.int)
            .unwrap_or_else(|e| panic!("{s}: {e}"))
    }

    #[test]
    fn operators_and_precedence() {
        assert_eq!(i("(1+2*3)"), 7);
        assert_eq!(i("((1+2)*3)"), 9);
        assert_eq!(i("(2^3^2)"), 512); // right associative
        assert_eq!(i("(10-2-3)"), 5);
        assert_eq!(i("(17%5)"), 2);
        assert_eq!(i("(-3+5)"), 2);
        assert_eq!(i("(7/2)"), 3);
        assert_eq!(i("(0x10*2)"), 32);
    }

    #[test]
    fn suffixes_bind_tightest_and_ignore_kb_base() {
        assert_eq!(i("(1024*8)k"), 8 * 1024 * 1024);
        assert_eq!(i("(2*3k)"), 6144);
        assert_eq!(i("(4kib)"), 4000);
        assert_eq!(i("(1m)"), 1 << 20);
        assert_eq!(i("(2s)"), 2_000_000);
        assert_eq!(i("(5ms)"), 5000);
    }

    #[test]
    fn floats_follow_fio() {
        assert_eq!(i("(1.5*2)"), 3);
        assert!((eval("(1/4.0)").map(|n| n.float).unwrap_or(0.0) - 0.25).abs() < 1e-12);
    }

    #[test]
    fn errors() {
        assert!(eval("(1/0)").is_err());
        assert!(eval("(1+").is_err());
        assert!(eval("(2x)").is_err());
        assert!(eval("(1.5%2)").is_err());
        assert!(eval("(1)(2)").is_err());
    }
}
