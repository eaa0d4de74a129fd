//! TLS from the PEM contents of the phase spec (agents/cql/tls.py's TlsOptions), through
//! openssl: the CA is the only trust anchor; a client certificate when given.

use openssl::pkey::PKey;
use openssl::ssl::{SslConnector, SslMethod, SslVerifyMode};
use openssl::x509::store::X509StoreBuilder;
use openssl::x509::X509;
use scylla::client::session::OpenSsl010Config;

#[derive(Clone)]
pub struct TlsPem {
    pub ca_pem: String,
    pub cert_pem: Option<String>,
    pub key_pem: Option<String>,
}

pub fn config(tls: &TlsPem) -> Result<OpenSsl010Config, String> {
    let e = |what: &str, err: openssl::error::ErrorStack| format!("TLS {what}: {err}");
    let mut builder = SslConnector::builder(SslMethod::tls_client()).map_err(|x| e("context", x))?;
    let mut store = X509StoreBuilder::new().map_err(|x| e("store", x))?;
    for cert in X509::stack_from_pem(tls.ca_pem.as_bytes()).map_err(|x| e("CA", x))? {
        store.add_cert(cert).map_err(|x| e("CA", x))?;
    }
    builder.set_cert_store(store.build());
    builder.set_verify(SslVerifyMode::PEER);
    if let (Some(cert), Some(key)) = (&tls.cert_pem, &tls.key_pem) {
        let cert = X509::from_pem(cert.as_bytes()).map_err(|x| e("client certificate", x))?;
        let key = PKey::private_key_from_pem(key.as_bytes()).map_err(|x| e("client key", x))?;
        builder.set_certificate(&cert).map_err(|x| e("client certificate", x))?;
        builder.set_private_key(&key).map_err(|x| e("client key", x))?;
    }
    Ok(OpenSsl010Config::new(builder))
}
