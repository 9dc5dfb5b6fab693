//! `SqlConnection`: a SQLite database on a simulated SSD (nandlab-sql), for the DB-API 2.0
//! wrapper in `python/nandlab/sql.py`. Values cross as Python objects (None, int, float, str,
//! bytes); metrics and reports as JSON text.

use super::{PySink, Ticks};
use nandlab_lab::control::Control;
use nandlab_sql::Interrupt;
use nandlab_sql::{JournalMode, SqlDb, SqlOptions, SqlValue, StatementOutput};
use pyo3::exceptions::{PyTypeError, PyValueError};
use pyo3::prelude::*;
use pyo3::types::{PyBool, PyBytes, PyFloat, PyInt, PyString};
use std::ops::ControlFlow;
use std::sync::{Arc, Mutex};

fn to_py_err(e: nandlab_sql::SqlError) -> PyErr {
    PyValueError::new_err(e.to_string())
}

/// A connection's database and device; `None` once closed.
#[pyclass(module = "nandlab._nandlab")]
#[derive(Debug)]
pub struct SqlConnection {
    db: Mutex<Option<SqlDb>>,
}

/// One statement's result: (columns, rows, changes, last insert rowid).
type Executed = (Vec<String>, Vec<Vec<Py<PyAny>>>, u64, i64);

impl SqlConnection {
    fn with<T>(&self, f: impl FnOnce(&mut SqlDb) -> nandlab_sql::SqlResult<T>) -> PyResult<T> {
        let mut guard = self
            .db
            .lock()
            .map_err(|_| PyValueError::new_err("connection: an earlier call failed inside"))?;
        let db = guard
            .as_mut()
            .ok_or_else(|| PyValueError::new_err("connection: closed"))?;
        f(db).map_err(to_py_err)
    }

    /// Runs `f` on the database without the GIL, interruptible: about every 100 ms of a
    /// running statement (and between statements) the interpreter's signals are checked, and a
    /// KeyboardInterrupt (Ctrl-C) stops the statement (SQLite rolls it back) and is raised.
    fn interruptible<T: Send>(
        &self,
        py: Python<'_>,
        f: impl FnOnce(&mut SqlDb) -> nandlab_sql::SqlResult<T> + Send,
    ) -> PyResult<T> {
        let ticks = Arc::new(Ticks {
            callback: None,
            error: Mutex::new(None),
        });
        let control = Control::with_sink(PySink(Arc::clone(&ticks)));
        let check: Interrupt = Arc::new(move || !control.poll());
        let result = py.detach(|| {
            self.with(|db| {
                db.set_interrupt(Some(check))?;
                let result = f(db);
                db.set_interrupt(None)?;
                result
            })
        });
        let error = ticks.error.lock().unwrap_or_else(|p| p.into_inner()).take();
        match error {
            Some(error) => Err(error),
            None => result,
        }
    }
}

#[pymethods]
impl SqlConnection {
    #[new]
    #[allow(clippy::too_many_arguments)] // the keyword arguments of nandlab.sql.connect()
    #[pyo3(signature = (device, journal_mode, seed=None, page_size_bytes=None, cache_size=None, synchronous=None, db_name="main.db".to_string()))]
    fn new(
        py: Python<'_>,
        device: String,
        journal_mode: String,
        seed: Option<u64>,
        page_size_bytes: Option<u32>,
        cache_size: Option<i64>,
        synchronous: Option<String>,
        db_name: String,
    ) -> PyResult<Self> {
        let journal_mode: JournalMode = journal_mode.parse().map_err(to_py_err)?;
        let options = SqlOptions {
            db_name,
            journal_mode,
            page_size_bytes,
            cache_size,
            synchronous,
        };
        let db = py
            .detach(|| nandlab_lab::sql::open_device(&device, seed, options))
            .map_err(|e| PyValueError::new_err(e.to_string()))?;
        Ok(SqlConnection {
            db: Mutex::new(Some(db)),
        })
    }

    /// Runs one statement with positional parameters.
    fn execute(
        &self,
        py: Python<'_>,
        sql: String,
        params: Vec<Bound<'_, PyAny>>,
    ) -> PyResult<Executed> {
        let values = params
            .iter()
            .enumerate()
            .map(|(i, p)| to_value(i, p))
            .collect::<PyResult<Vec<_>>>()?;
        let (output, rowid) = self.interruptible(py, |db| {
            Ok((db.execute(&sql, &values)?, db.last_insert_rowid()))
        })?;
        Ok(to_executed(py, output, rowid))
    }

    /// Runs every statement of a script; returns the last statement's result.
    fn execute_script(&self, py: Python<'_>, sql: String) -> PyResult<Executed> {
        let (outputs, rowid) =
            self.interruptible(py, |db| Ok((db.run_script(&sql)?, db.last_insert_rowid())))?;
        let last = outputs.into_iter().last().unwrap_or(StatementOutput {
            columns: Vec::new(),
            rows: Vec::new(),
            changes: 0,
        });
        Ok(to_executed(py, last, rowid))
    }

    /// True inside BEGIN … COMMIT.
    #[getter]
    fn in_transaction(&self) -> PyResult<bool> {
        self.with(|db| Ok(db.in_transaction()))
    }

    #[getter]
    fn closed(&self) -> bool {
        self.db.lock().map(|g| g.is_none()).unwrap_or(true)
    }

    /// The per-transaction metrics of the current measurement (JSON).
    fn metrics_json(&self) -> PyResult<String> {
        self.with(|db| Ok(serde_json::to_string(&db.metrics()?).expect("metrics serialize")))
    }

    /// Starts a new measurement.
    fn reset_metrics(&self) -> PyResult<()> {
        self.with(|db| db.reset_metrics())
    }

    /// The SSD's report since it was built (JSON).
    fn device_report_json(&self) -> PyResult<String> {
        self.with(|db| Ok(serde_json::to_string(&db.device_report()?).expect("reports serialize")))
    }

    /// The files on the simulated disk: (name, size in bytes).
    fn files(&self) -> PyResult<Vec<(String, u64)>> {
        self.with(|db| Ok(db.disk()?.file_sizes()))
    }

    /// Closes the database (idempotent).
    fn close(&self) {
        if let Ok(mut g) = self.db.lock() {
            g.take();
        }
    }
}

fn to_value(index: usize, p: &Bound<'_, PyAny>) -> PyResult<SqlValue> {
    if p.is_none() {
        Ok(SqlValue::Null)
    } else if p.is_instance_of::<PyBool>() {
        Ok(SqlValue::Integer(i64::from(p.extract::<bool>()?)))
    } else if p.is_instance_of::<PyInt>() {
        p.extract::<i64>().map(SqlValue::Integer).map_err(|_| {
            PyValueError::new_err(format!("parameter {index}: integer out of 64-bit range"))
        })
    } else if p.is_instance_of::<PyFloat>() {
        Ok(SqlValue::Real(p.extract::<f64>()?))
    } else if p.is_instance_of::<PyString>() {
        Ok(SqlValue::Text(p.extract::<String>()?))
    } else if let Ok(bytes) = p.extract::<Vec<u8>>() {
        Ok(SqlValue::Blob(bytes))
    } else {
        Err(PyTypeError::new_err(format!(
            "parameter {index}: type {} is not supported (None, int, float, str, bytes)",
            p.get_type().name()?
        )))
    }
}

fn to_executed(py: Python<'_>, output: StatementOutput, rowid: i64) -> Executed {
    let rows = output
        .rows
        .into_iter()
        .map(|row| row.into_iter().map(|v| to_object(py, v)).collect())
        .collect();
    (output.columns, rows, output.changes, rowid)
}

fn to_object(py: Python<'_>, v: SqlValue) -> Py<PyAny> {
    match v {
        SqlValue::Null => py.None(),
        SqlValue::Integer(i) => i
            .into_pyobject(py)
            .expect("ints convert")
            .into_any()
            .unbind(),
        SqlValue::Real(r) => r
            .into_pyobject(py)
            .expect("floats convert")
            .into_any()
            .unbind(),
        SqlValue::Text(t) => t
            .into_pyobject(py)
            .expect("strs convert")
            .into_any()
            .unbind(),
        SqlValue::Blob(b) => PyBytes::new(py, &b).into_any().unbind(),
    }
}

/// The TPC-C-like workload on a new database on a new SSD; the report as JSON.
#[pyfunction]
#[allow(clippy::too_many_arguments)] // the keyword arguments of nandlab.sql.tpcc()
#[pyo3(signature = (device, journal_mode, warehouses, terminals, transactions, seed, small))]
pub fn run_tpcc(
    py: Python<'_>,
    device: String,
    journal_mode: String,
    warehouses: i64,
    terminals: i64,
    transactions: u64,
    seed: u64,
    small: bool,
) -> PyResult<String> {
    use nandlab_sql::tpcc::{TpccConfig, TpccScale, run_tpcc_with};
    let config = TpccConfig {
        warehouses,
        terminals,
        transactions,
        seed,
        scale: if small {
            TpccScale::small()
        } else {
            TpccScale::standard()
        },
    };
    config.validate().map_err(to_py_err)?;
    let journal_mode: JournalMode = journal_mode.parse().map_err(to_py_err)?;
    let options = SqlOptions {
        journal_mode,
        ..SqlOptions::default()
    };
    super::controlled(py, None, |control| {
        let mut db = nandlab_lab::sql::open_device(&device, Some(seed), options)?;
        let sql_error = |e: nandlab_sql::SqlError| nandlab_lab::LabError::Usage(e.to_string());
        let check = control.clone();
        db.set_interrupt(Some(Arc::new(move || !check.poll())))
            .map_err(sql_error)?;
        let report = run_tpcc_with(&mut db, &config, &mut |_, _| {
            if control.poll() {
                ControlFlow::Continue(())
            } else {
                ControlFlow::Break(())
            }
        })
        .map_err(sql_error)?;
        Ok(serde_json::to_string(&report).expect("reports serialize"))
    })
}
