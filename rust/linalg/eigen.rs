//! Symmetric eigen-decomposition in f64: Householder reduction to tridiagonal
//! form, then the implicit-shift QL iteration. Used by PCA; d is at most a few
//! thousand, so the O(d^3) dense method is the simple, exact choice.

/// Eigenvalues (descending) and eigenvectors (row i of the returned matrix is
/// the eigenvector of value i) of the symmetric n x n row-major matrix `a`.
pub fn symmetric_eigen(a: &[f64], n: usize) -> (Vec<f64>, Vec<f64>) {
    if n == 0 {
        return (vec![], vec![]);
    }
    let mut v = a.to_vec();
    let mut d = vec![0f64; n];
    let mut e = vec![0f64; n];
    tridiagonalize(&mut v, &mut d, &mut e, n);
    // The QL sweep rotates eigenvector columns; transposing makes them rows.
    let mut vt = vec![0f64; n * n];
    for i in 0..n {
        for k in 0..n {
            vt[i * n + k] = v[k * n + i];
        }
    }
    ql_implicit(&mut vt, &mut d, &mut e, n);
    let mut order: Vec<usize> = (0..n).collect();
    order.sort_by(|&x, &y| d[y].partial_cmp(&d[x]).unwrap_or(std::cmp::Ordering::Equal));
    let vals = order.iter().map(|&i| d[i]).collect();
    let mut vecs = Vec::with_capacity(n * n);
    for &i in &order {
        vecs.extend_from_slice(&vt[i * n..(i + 1) * n]);
    }
    (vals, vecs)
}

fn tridiagonalize(v: &mut [f64], d: &mut [f64], e: &mut [f64], n: usize) {
    let at = |i: usize, j: usize| i * n + j;
    for j in 0..n {
        d[j] = v[at(n - 1, j)];
    }
    for i in (1..n).rev() {
        let scale: f64 = d[..i].iter().map(|x| x.abs()).sum();
        let mut h = 0.0;
        if scale == 0.0 {
            e[i] = d[i - 1];
            for j in 0..i {
                d[j] = v[at(i - 1, j)];
                v[at(i, j)] = 0.0;
                v[at(j, i)] = 0.0;
            }
        } else {
            for x in d[..i].iter_mut() {
                *x /= scale;
                h += *x * *x;
            }
            let f = d[i - 1];
            let mut g = h.sqrt();
            if f > 0.0 {
                g = -g;
            }
            e[i] = scale * g;
            h -= f * g;
            d[i - 1] = f - g;
            for x in e[..i].iter_mut() {
                *x = 0.0;
            }
            for j in 0..i {
                let f = d[j];
                v[at(j, i)] = f;
                let mut g = e[j] + v[at(j, j)] * f;
                for k in j + 1..i {
                    g += v[at(k, j)] * d[k];
                    e[k] += v[at(k, j)] * f;
                }
                e[j] = g;
            }
            let mut f = 0.0;
            for j in 0..i {
                e[j] /= h;
                f += e[j] * d[j];
            }
            let hh = f / (h + h);
            for j in 0..i {
                e[j] -= hh * d[j];
            }
            for j in 0..i {
                let (f, g) = (d[j], e[j]);
                for k in j..i {
                    v[at(k, j)] -= f * e[k] + g * d[k];
                }
                d[j] = v[at(i - 1, j)];
                v[at(i, j)] = 0.0;
            }
        }
        d[i] = h;
    }
    // Accumulate the Householder reflections into v.
    for i in 0..n - 1 {
        v[at(n - 1, i)] = v[at(i, i)];
        v[at(i, i)] = 1.0;
        let h = d[i + 1];
        if h != 0.0 {
            for k in 0..=i {
                d[k] = v[at(k, i + 1)] / h;
            }
            for j in 0..=i {
                let mut g = 0.0;
                for k in 0..=i {
                    g += v[at(k, i + 1)] * v[at(k, j)];
                }
                for k in 0..=i {
                    v[at(k, j)] -= g * d[k];
                }
            }
        }
        for k in 0..=i {
            v[at(k, i + 1)] = 0.0;
        }
    }
    for j in 0..n {
        d[j] = v[at(n - 1, j)];
        v[at(n - 1, j)] = 0.0;
    }
    v[at(n - 1, n - 1)] = 1.0;
    e[0] = 0.0;
}

/// QL with implicit shifts on the tridiagonal (d, e); `vt` holds the
/// eigenvectors as rows and is rotated in place.
fn ql_implicit(vt: &mut [f64], d: &mut [f64], e: &mut [f64], n: usize) {
    for i in 1..n {
        e[i - 1] = e[i];
    }
    e[n - 1] = 0.0;
    let mut f = 0.0;
    let mut tst1: f64 = 0.0;
    let eps = f64::EPSILON;
    for l in 0..n {
        tst1 = tst1.max(d[l].abs() + e[l].abs());
        let mut m = l;
        while m < n - 1 && e[m].abs() > eps * tst1 {
            m += 1;
        }
        if m > l {
            let mut iter = 0;
            loop {
                iter += 1;
                let g = d[l];
                let mut p = (d[l + 1] - g) / (2.0 * e[l]);
                let mut r = p.hypot(1.0);
                if p < 0.0 {
                    r = -r;
                }
                d[l] = e[l] / (p + r);
                d[l + 1] = e[l] * (p + r);
                let dl1 = d[l + 1];
                let h = g - d[l];
                for x in d[l + 2..].iter_mut() {
                    *x -= h;
                }
                f += h;
                p = d[m];
                let (mut c, mut c2, mut c3) = (1.0, 1.0, 1.0);
                let el1 = e[l + 1];
                let (mut s, mut s2) = (0.0, 0.0);
                for i in (l..m).rev() {
                    c3 = c2;
                    c2 = c;
                    s2 = s;
                    let g = c * e[i];
                    let h = c * p;
                    r = p.hypot(e[i]);
                    e[i + 1] = s * r;
                    s = e[i] / r;
                    c = p / r;
                    p = c * d[i] - s * g;
                    d[i + 1] = h + s * (c * g + s * d[i]);
                    let (lo, hi) = vt.split_at_mut((i + 1) * n);
                    let ri = &mut lo[i * n..];
                    let ri1 = &mut hi[..n];
                    for k in 0..n {
                        let h = ri1[k];
                        ri1[k] = s * ri[k] + c * h;
                        ri[k] = c * ri[k] - s * h;
                    }
                }
                p = -s * s2 * c3 * el1 * e[l] / dl1;
                e[l] = s * p;
                d[l] = c * p;
                if e[l].abs() <= eps * tst1 || iter > 100 {
                    break;
                }
            }
        }
        d[l] += f;
        e[l] = 0.0;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decomposes_a_random_symmetric_matrix() {
        let n = 23;
        let mut r = crate::linalg::rng::Rng::new(9);
        let b: Vec<f64> = (0..n * n).map(|_| r.normal()).collect();
        let mut a = vec![0f64; n * n];
        for i in 0..n {
            for j in 0..n {
                a[i * n + j] = (0..n).map(|k| b[i * n + k] * b[j * n + k]).sum();
            }
        }
        let (vals, vecs) = symmetric_eigen(&a, n);
        assert!(vals.windows(2).all(|w| w[0] >= w[1]));
        for (t, &lam) in vals.iter().enumerate() {
            let v = &vecs[t * n..(t + 1) * n];
            let nv: f64 = v.iter().map(|x| x * x).sum();
            assert!((nv - 1.0).abs() < 1e-10);
            for i in 0..n {
                let av: f64 = (0..n).map(|k| a[i * n + k] * v[k]).sum();
                assert!((av - lam * v[i]).abs() < 1e-8 * vals[0], "{t} {i}");
            }
        }
    }

    #[test]
    fn handles_diagonal_and_tiny_sizes() {
        let (vals, _) = symmetric_eigen(&[3.0, 0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 2.0], 3);
        assert_eq!(vals, vec![3.0, 2.0, 1.0]);
        let (vals, vecs) = symmetric_eigen(&[5.0], 1);
        assert_eq!((vals, vecs), (vec![5.0], vec![1.0]));
    }
}
