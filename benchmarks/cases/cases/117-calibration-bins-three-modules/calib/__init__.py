from .metric import TokenCalibrationError
